// Deciding how run_bash runs commands in this process: in bubblewrap when the machine has it, and
// unconfined only with --no-sandbox or after a yes on a terminal.
import { createInterface } from 'node:readline/promises';
import type { Writable } from 'node:stream';
import { SandboxUnavailableError } from '../errors/index.js';
import type { RunSandbox } from '../journal/entry.js';
import { probeSandbox } from '../tools/sandbox.js';
import type { Style } from './style.js';

/** What the flags ask for: a sandbox or not, and what it allows. */
export interface SandboxFlags {
  use: boolean;
  network: boolean;
  gitWrites: boolean;
}

/** The sandbox for this process's commands; throws SandboxUnavailableError when none is possible and none was waived. */
export async function chooseSandbox(root: string, flags: SandboxFlags, context: { interactive: boolean; out: Writable; style: Style }): Promise<RunSandbox> {
  if (!flags.use) return { kind: 'none', network: true, gitWrites: true };
  const probe = probeSandbox(root);
  if (probe.ok) return { kind: 'bwrap', network: flags.network, gitWrites: flags.gitWrites };
  if (!context.interactive) throw new SandboxUnavailableError(probe.reason);
  const { out, style } = context;
  out.write(style.yellow(`  Commands cannot run in a sandbox here: ${probe.reason}. Install it with "apt-get install bubblewrap" (Debian, Ubuntu) or "dnf install bubblewrap" (Fedora).\n`));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question('  Run commands unconfined, with your whole environment and file system? [y/N]: ')).trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') return { kind: 'none', network: true, gitWrites: true };
  } finally {
    rl.close();
  }
  throw new SandboxUnavailableError(probe.reason);
}
