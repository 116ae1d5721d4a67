// Every child process savepoint starts is started here: commands (run_bash, background commands,
// the spare shell, hooks), git, the sandbox probe, the pager, the editor, the demo's children. One
// place owns the four things each of them needs and that each once did its own way:
//   start    Node's spawn, wrapped once (`startProcess`), or its synchronous forms (`runSync`,
//            `outputSync`) for the short git commands a step waits on anyway;
//   timeout  a timer of its own (`ProcessHandle.limit`), cleared on the child's exit and on a spawn
//            that failed, and unref'd: it never keeps this process alive on its own account. Spawn's
//            `timeout` option is cleared only on an exit, which a program that is not installed never
//            has: the sandbox probe's 10-second timer kept every refused run alive after it said why;
//   kill     SIGKILL to the process group when the child leads one (`group`: setsid), so a timeout or
//            an abort takes down everything a command started, not only its shell;
//   reap     `exited` and `closed` settle once, however the child ends (an exit, a signal, a spawn
//            that failed), the abort listener is removed, and with `killGroupOnExit` what the child
//            left running in its group goes with it.
// Node's spawn rather than execa: the commands need what execa does not give through its API (a
// group killed as a whole, extra pipes such as the spare shell's script on fd 3, a child that holds
// no event loop until it is handed work) and the rest are git commands on paths where loading execa
// (270 KB, 160-200 ms of a `log --html` start-up under load) cost more than the command.
import {
  execFileSync,
  spawn,
  spawnSync,
  type ChildProcess,
  type ChildProcessWithoutNullStreams,
  type ExecFileSyncOptions,
  type SpawnSyncOptions,
  type SpawnSyncReturns,
  type StdioOptions,
} from 'node:child_process';

/** A command line to start: the program, its arguments and its whole environment. */
export interface CommandLine {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** How to start a child process. */
export interface StartOptions {
  cwd?: string;
  /** Its whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Its stdin, stdout, stderr and any further descriptors, as Node's spawn takes them (default: stdin ignored, stdout and stderr piped). */
  stdio?: StdioOptions;
  /** A process group of its own (setsid): `kill`, a timeout and an abort reach everything it started. */
  group?: boolean;
  /** Milliseconds before it is killed (SIGKILL; its group with `group`); `limit` sets it later. */
  timeoutMs?: number;
  /** Killed (SIGKILL; its group with `group`) when this aborts. */
  signal?: AbortSignal;
  /** When the child exits, SIGKILL to its group: what it left running there goes too (only with `group`). */
  killGroupOnExit?: boolean;
  /** Whether the child and its pipes keep this process alive (default true); `keepAlive` changes it later. */
  keepAlive?: boolean;
  /** A shell runs `file` as a command line (the pager and the editor, named by the person's variables). */
  shell?: boolean;
}

/** How a child process ended: its exit code or signal, or the error that kept it from starting. */
export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** It never started (not installed, no such directory) or could not be signalled. */
  error?: Error;
  /** Killed by its timeout. */
  timedOut: boolean;
  /** Killed because its abort signal fired. */
  aborted: boolean;
}

/** A started child process: its Node handle, how it ends, and the one way to kill it. */
export interface ProcessHandle<Child extends ChildProcess = ChildProcess> {
  /** Node's handle, for its pipes and events. */
  readonly child: Child;
  /** Its pid, also its group's id with `group`; undefined when the spawn failed. */
  readonly pid: number | undefined;
  /** Settles once it has exited, or failed to start (its pipes may still be held by what it started). */
  readonly exited: Promise<ProcessEnd>;
  /** Settles once it has exited and its pipes are closed, or it failed to start. */
  readonly closed: Promise<ProcessEnd>;
  /** Whether it has neither exited nor failed to start. */
  readonly running: boolean;
  /** Sends `signal` (default SIGKILL) to its group with `group`, else to it; nothing when it is gone. */
  kill(signal?: NodeJS.Signals): void;
  /** (Re)starts its timeout: killed `ms` from now unless it exits first, `onTimeout` told just before. */
  limit(ms: number, onTimeout?: () => void): void;
  /** Whether it (and its pipes) keep this process alive. */
  keepAlive(on: boolean): void;
}

// Node fires a longer delay than 2^31-1 ms at once, so a longer timeout is held to about 24 days.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Starts `file` with `args` as `options` say (the one call of Node's spawn in savepoint); its stdin, stdout and stderr all piped, they are never null. */
export function startProcess(
  file: string,
  args: readonly string[],
  options: StartOptions & { stdio: ['pipe', 'pipe', 'pipe'] },
): ProcessHandle<ChildProcessWithoutNullStreams>;
export function startProcess(file: string, args: readonly string[], options?: StartOptions): ProcessHandle;
export function startProcess(file: string, args: readonly string[], options: StartOptions = {}): ProcessHandle {
  const child = spawn(file, [...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
    detached: options.group === true,
    shell: options.shell === true,
  });
  return new Handle(child, options);
}

class Handle implements ProcessHandle {
  readonly child: ChildProcess;
  readonly exited: Promise<ProcessEnd>;
  readonly closed: Promise<ProcessEnd>;
  private readonly group: boolean;
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private aborted = false;
  private failed: Error | undefined;
  private over = false;

  constructor(child: ChildProcess, options: StartOptions) {
    this.child = child;
    this.group = options.group === true;
    const end = (code: number | null, signal: NodeJS.Signals | null): ProcessEnd => ({
      code,
      signal,
      ...(this.failed ? { error: this.failed } : {}),
      timedOut: this.timedOut,
      aborted: this.aborted,
    });
    const signal = options.signal;
    const onAbort = () => {
      this.aborted = true;
      this.kill();
    };
    // Whatever ends it, nothing of this handle's outlives that: the timer and the abort listener go.
    const finish = () => {
      this.over = true;
      clearTimeout(this.timer);
      this.timer = undefined;
      signal?.removeEventListener('abort', onAbort);
    };
    this.exited = new Promise((resolve) => {
      // `on`, not `once`: a later 'error' (a signal that could not be sent) must find a listener too.
      child.on('error', (error) => {
        this.failed ??= error;
        finish();
        resolve(end(null, null));
      });
      child.once('exit', (code, killedBy) => {
        finish();
        if (options.killGroupOnExit) this.kill();
        resolve(end(code, killedBy));
      });
    });
    this.closed = new Promise((resolve) => {
      child.once('error', () => resolve(end(null, null)));
      child.once('close', (code, killedBy) => resolve(end(code, killedBy)));
    });
    if (child.pid === undefined) return; // the spawn failed: its 'error' is on its way, nothing to time or abort
    if (options.timeoutMs !== undefined) this.limit(options.timeoutMs);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    if (options.keepAlive === false) this.keepAlive(false);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.over && this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      if (this.group) process.kill(-pid, signal);
      else if (this.running) this.child.kill(signal);
    } catch {
      // the group is already empty
    }
  }

  limit(ms: number, onTimeout?: () => void): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(
      () => {
        this.timedOut = true;
        onTimeout?.();
        this.kill();
      },
      Math.min(ms, LONGEST_TIMER_MS),
    );
    // The child itself keeps this process alive while it runs (unless it was unref'd on purpose): the timer never does.
    this.timer.unref();
  }

  keepAlive(on: boolean): void {
    for (const each of [this.child, ...this.child.stdio]) {
      const handle = each as { ref?: () => void; unref?: () => void } | null;
      if (on) handle?.ref?.();
      else handle?.unref?.();
    }
  }
}

/** How a child process run to its end went, its output whole. */
export interface RunResult extends ProcessEnd {
  stdout: Buffer;
  stderr: Buffer;
}

/** Options of `runProcess`: those of `startProcess`, the bytes for its stdin, and a bound on what it may print. */
export interface RunOptions extends Omit<StartOptions, 'stdio' | 'keepAlive'> {
  /** Written to its stdin, which is then closed (default: stdin empty). */
  input?: string | Buffer;
  /** Past this many bytes of stdout and stderr together it is killed and `overflow` set (default: no bound). */
  maxBuffer?: number;
}

/** Runs `file` with `args` to its end and gives back its output; never rejects (a spawn that failed is `error`). */
export async function runProcess(
  file: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult & { overflow: boolean }> {
  const handle = startProcess(file, args, { ...options, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let size = 0;
  let overflow = false;
  const keep = (into: Buffer[]) => (chunk: Buffer) => {
    size += chunk.length;
    if (options.maxBuffer !== undefined && size > options.maxBuffer) {
      overflow = true;
      return handle.kill();
    }
    into.push(chunk);
  };
  handle.child.stdout!.on('data', keep(stdout));
  handle.child.stderr!.on('data', keep(stderr));
  if (options.input !== undefined) {
    handle.child.stdin!.on('error', () => {}); // a child gone early: its exit says why
    handle.child.stdin!.end(options.input);
  }
  const end = await handle.closed;
  return { ...end, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), overflow };
}

/**
 * Runs `file` with `args` and waits for it, this thread blocked (Node's spawnSync): for the short
 * git commands a step waits on anyway. Its `timeout` kills with SIGKILL unless told otherwise; a
 * synchronous run leaves no timer behind.
 */
export function runSync(
  file: string,
  args: readonly string[],
  options: SpawnSyncOptions & { encoding: BufferEncoding },
): SpawnSyncReturns<string>;
export function runSync(file: string, args: readonly string[], options?: SpawnSyncOptions): SpawnSyncReturns<Buffer>;
export function runSync(file: string, args: readonly string[], options: SpawnSyncOptions = {}): SpawnSyncReturns<string | Buffer> {
  return spawnSync(file, [...args], { killSignal: 'SIGKILL', ...options });
}

/**
 * The stdout of `file` with `args`, waited for as `runSync` does; throws as Node's execFileSync
 * throws (the error's `status` and `stderr` say how it failed) when it does not exit 0.
 */
export function outputSync(file: string, args: readonly string[], options: ExecFileSyncOptions & { encoding: BufferEncoding }): string;
export function outputSync(file: string, args: readonly string[], options?: ExecFileSyncOptions): Buffer;
export function outputSync(file: string, args: readonly string[], options: ExecFileSyncOptions = {}): string | Buffer {
  return execFileSync(file, [...args], { killSignal: 'SIGKILL', ...options });
}
