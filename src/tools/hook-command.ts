// One hook's command, run as Claude Code runs it: `bash -c <command>` in the working tree, the
// event's JSON on stdin, its own process group (a timeout or a stop kills the whole group, never
// just the shell), stdout and stderr kept up to a bound. A hook the repository brought runs in the
// run's sandbox (bubblewrap, as run_bash does); the person's own hooks run unconfined, as theirs.
// What the exit code and the output mean is the agent's (agent/hooks.ts): this file only runs it.
// Tested in test/agent/hooks.test.ts.
import { startProcess } from '../os/processes.js';
import { sandboxedCommand, type SandboxConfig } from './sandbox.js';

/** The hook events savepoint runs, in Claude Code's spelling. */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop'] as const;

/** One of HOOK_EVENTS. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** One hook in force: its event, the matcher it is under, its command and timeout, and where it came from. */
export interface HookDefinition {
  event: HookEvent;
  /** The matcher as written ('' or `*`: every tool; only tool events use it). */
  matcher: string;
  command: string;
  /** Seconds before its process group is killed. */
  timeout: number;
  /** The settings file it is in. */
  source: string;
  /** It came from the repository's settings (trusted): it runs in the sandbox. */
  sandboxed: boolean;
}

/** The timeout of a hook that names none, in seconds (Claude Code's). */
export const DEFAULT_HOOK_TIMEOUT = 60;

/** The most of a hook's stdout or stderr kept: what reaches the model or the person is a message, not a log. */
export const MAX_HOOK_OUTPUT = 64 * 1024;

/** What one hook's process did. */
export interface HookRun {
  /** Its exit code; null when a signal ended it (a timeout, a stop). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** It ran past its timeout and its group was killed. */
  timedOut: boolean;
  /** It could not be started (no bash, no bwrap). */
  failed?: string;
}

/** Where and how a hook runs: the working tree, the environment, and the sandbox for a repository's hooks. */
export interface HookPlace {
  root: string;
  env: NodeJS.ProcessEnv;
  /** The run's sandbox, for hooks that come from the repository (asked when one runs). */
  sandbox: () => SandboxConfig;
  /** The repository's git directories, kept read-only in the sandbox. */
  gitDirs?: string[];
  signal?: AbortSignal;
}

/** Runs `hook` with `input` as JSON on its stdin; never throws (a hook that cannot start says so in `failed`). */
export function runHookCommand(hook: HookDefinition, input: unknown, place: HookPlace): Promise<HookRun> {
  // CLAUDE_PROJECT_DIR too, so a hook written for Claude Code finds its scripts.
  const env = { ...place.env, CLAUDE_PROJECT_DIR: place.root, SAVEPOINT_PROJECT_DIR: place.root };
  // Stopped already (Ctrl-C): nothing is started.
  if (place.signal?.aborted) return Promise.resolve({ code: null, stdout: '', stderr: '', timedOut: false, failed: 'the run was stopped' });
  let how;
  try {
    how = sandboxedCommand(place.root, hook.command, hook.sandboxed ? place.sandbox() : { kind: 'none' }, env, place.gitDirs);
  } catch (error) {
    return Promise.resolve({ code: null, stdout: '', stderr: '', timedOut: false, failed: (error as Error).message });
  }
  const out = new Bounded();
  const err = new Bounded();
  // Its group is killed at its timeout, when the run is stopped (Ctrl-C), and when the hook's shell
  // exits: what it left running there goes with it, and can hold its output pipes open no longer.
  const handle = startProcess(how.file, how.args, {
    cwd: place.root,
    env: how.env,
    group: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    timeoutMs: hook.timeout * 1000,
    signal: place.signal,
    killGroupOnExit: true,
  });
  const { child } = handle;
  child.stdout!.on('data', (chunk: Buffer) => out.add(chunk));
  child.stderr!.on('data', (chunk: Buffer) => err.add(chunk));
  // A hook that does not read its stdin closes the pipe early: that is its business.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(`${JSON.stringify(input)}\n`);
  return handle.closed.then((end) => {
    const run: HookRun = { code: end.code, stdout: out.text(), stderr: err.text(), timedOut: end.timedOut };
    return end.error ? { ...run, code: null, failed: end.error.message } : run;
  });
}

// A stream's bytes up to MAX_HOOK_OUTPUT, and whether more came.
class Bounded {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private cut = false;

  add(chunk: Buffer): void {
    const room = MAX_HOOK_OUTPUT - this.size;
    if (room <= 0) return void (this.cut = true);
    if (chunk.length > room) this.cut = true;
    const kept = chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.cut ? `${text}\n[… cut at ${MAX_HOOK_OUTPUT} bytes]` : text;
  }
}
