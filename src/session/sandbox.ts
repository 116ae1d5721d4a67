// How run_bash runs commands in this process: in bubblewrap when the machine has it, unconfined only
// when the caller waived the sandbox (--no-sandbox) or said yes when asked. A decision, never terminal
// I/O: the CLI asks the person in the `onSandboxUnavailable` callback.
import { SandboxUnavailableError } from '../errors/index.js';
import type { RunSandbox } from '../journal/entry.js';
import { probeSandboxAsync, sandboxRemedy } from '../tools/sandbox.js';

/** What the caller asks for: a sandbox or not, and what it allows. */
export interface SandboxRequest {
  /** Run commands in bubblewrap (default true). */
  use?: boolean;
  /** Let commands in the sandbox reach the network. */
  network?: boolean;
  /** Let commands in the sandbox write the repository's git directories. */
  gitWrites?: boolean;
}

/** How the sandbox was decided: by default, by --no-sandbox, or by the person's yes when bubblewrap could not start. */
export type SandboxChoice = 'default' | 'flag' | 'asked';

/** The sandbox for this process's commands; throws SandboxUnavailableError when none is possible and none was waived. */
export async function chooseSandbox(
  root: string,
  request: SandboxRequest = {},
  onUnavailable?: (reason: string, remedy: string) => Promise<boolean>,
): Promise<{ sandbox: RunSandbox; choice: SandboxChoice }> {
  if (request.use === false) return { sandbox: { kind: 'none', network: true, gitWrites: true }, choice: 'flag' };
  const probe = await probeSandboxAsync(root);
  if (probe.ok)
    return { sandbox: { kind: 'bwrap', network: Boolean(request.network), gitWrites: Boolean(request.gitWrites) }, choice: 'default' };
  if (onUnavailable && (await onUnavailable(probe.reason, sandboxRemedy(probe))))
    return { sandbox: { kind: 'none', network: true, gitWrites: true }, choice: 'asked' };
  throw new SandboxUnavailableError(probe.reason, sandboxRemedy(probe));
}

/**
 * The sandbox of one run in this process, decided once by the first that needs it: a new run's
 * stdio MCP servers listing their tools while the journal opens (they run in it too, so none starts
 * before), or the run's settling before it goes live. `current` is what commands run in from then on
 * (no sandbox until it is settled: nothing runs live before).
 */
export class RunSandboxChoice {
  private deciding: ReturnType<typeof chooseSandbox> | undefined;
  private settled: RunSandbox = { kind: 'none', network: true, gitWrites: true };

  constructor(
    private readonly root: string,
    private readonly request: SandboxRequest | undefined,
    private readonly onUnavailable: ((reason: string, remedy: string) => Promise<boolean>) | undefined,
  ) {}

  /** The decision, made on the first call (the probe started when the run opened). */
  decide(): ReturnType<typeof chooseSandbox> {
    return (this.deciding ??= chooseSandbox(this.root, this.request, this.onUnavailable));
  }

  /** Decides (once) and makes the decision the run's from now on. */
  async settle(): Promise<{ sandbox: RunSandbox; choice: SandboxChoice }> {
    const decided = await this.decide();
    this.settled = decided.sandbox;
    return decided;
  }

  /** How this run's commands run now. */
  get current(): RunSandbox {
    return this.settled;
  }
}
