// A command that runs in the background (run_bash's `run_in_background`): its own process group,
// its output (stdout and stderr together) kept in memory until read, and never outliving this
// process. Three things hold that last promise, each covering what the one before cannot:
//   - a watchdog, a tiny bash of its own beside the command (never its child: the command's `wait`
//     must not wait for it), blocked in `read` on a pipe (fd 3) whose other end only this process
//     holds: when this process dies, by any means (kill -9 included), the kernel closes its end, the
//     read sees end of file, and the watchdog kills the command's whole group;
//   - in the sandbox, bubblewrap's --die-with-parent and its pid namespace (see tools/sandbox.ts),
//     bubblewrap being this process's own child (never a spare shell's, which is another process);
//   - this process's own exit (a run that ends, /exit, Ctrl-C) kills every group it still has.
// A process that leaves the group on purpose (setsid, a daemon) escapes the first and third
// outside the sandbox, as it escapes run_bash; the next attempt's live-commands cleanup is the
// last line there.
// Tested in test/tools/background.test.ts.
import { StringDecoder } from 'node:string_decoder';
import type { Writable } from 'node:stream';
import { startProcess, type CommandLine, type ProcessHandle } from './processes.js';

/**
 * How much unread output one background command keeps (bytes): past it, the oldest unread bytes
 * are dropped and the next read says how many. Bounded so a chatty server cannot grow memory.
 */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/**
 * What the watchdog runs (bash, the command's group id as $1): `read -N 1` returns only at end of
 * file (nothing is ever written to the pipe), that is when this process has died; then SIGKILL to
 * the whole group.
 */
export const WATCHDOG = 'read -r -N 1 _ <&3; kill -KILL -- "-$1"';

// How long a stop waits, once the command has ended, for the rest of its output.
const SETTLE_MS = 200;

/** How a background command ended: its exit code, or the signal that killed it. */
export interface BackgroundExit {
  code?: number;
  signal?: string;
  at: Date;
}

/** What a read of a background command gives: the output since the last read, and whether it still runs. */
export interface BackgroundRead {
  output: string;
  /** Unread bytes dropped because more than MAX_UNREAD_BYTES came between two reads. */
  dropped: number;
  /** Set once the command has ended. */
  exit?: BackgroundExit;
}

// Every background process this process still runs: killed when it exits, however it exits.
const running = new Set<BackgroundProcess>();
let exitHookSet = false;

/** Kills (SIGKILL, at once) every background command this process still runs: for its exit. */
export function killBackgroundProcesses(): void {
  for (const each of running) each.killNow();
}

/** One background command, started at once in a process group of its own. */
export class BackgroundProcess {
  readonly child: ProcessHandle['child'];
  private readonly handle: ProcessHandle;
  readonly startedAt = new Date();
  private chunks: Buffer[] = [];
  private unread = 0;
  private dropped = 0;
  private readonly decoder = new StringDecoder('utf8');
  private ended: BackgroundExit | undefined;
  // Settles once the command (its group's leader) has ended, or never started.
  private readonly exited: Promise<void>;
  // Settles once its output is read to the end (a process that left the group may hold it open for ever).
  private readonly closed: Promise<void>;
  private readonly onEnd: (() => void) | undefined;
  private readonly watchdog: ProcessHandle | undefined;

  /**
   * Starts `line` (the command line that runs the command, sandboxed or not, as run_bash builds it)
   * in `cwd`, and its watchdog. `onEnd` is told once the command has ended and its group is gone.
   */
  constructor(line: CommandLine, cwd: string, onEnd?: () => void) {
    this.onEnd = onEnd;
    if (!exitHookSet) {
      exitHookSet = true;
      process.on('exit', killBackgroundProcesses);
    }
    // A group of its own (setsid), stdin empty (end of file), as for run_bash. Never keeps this
    // process alive on its own: a run that ends, ends (and stops it, see above).
    this.handle = startProcess(line.file, line.args, { cwd, env: line.env, group: true, keepAlive: false });
    this.child = this.handle.child;
    running.add(this);
    // Unconfined, in a group of its own (the command's kill never reaches it before its end), fd 3
    // its pipe; it reads nothing else and writes nothing. No bash: the other lines still hold (see
    // the header). Without the person's ~/.bashrc, as every bash for a command (tools/sandbox.ts's
    // BASH_STARTUP, out of this floor's reach): SSH_CLIENT set and no SHLVL would have it sourced.
    if (this.child.pid) {
      try {
        this.watchdog = startProcess('bash', ['--norc', '--noprofile', '-c', WATCHDOG, 'savepoint-watchdog', String(this.child.pid)], {
          stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
          group: true,
          keepAlive: false,
        });
        (this.watchdog.child.stdio[3] as Writable).on('error', () => {});
      } catch {
        // as above
      }
    }
    const keep = (chunk: Buffer) => this.keep(chunk);
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = new Promise<void>((resolve) => {
      this.child.once('error', (error) => {
        // It never started (no bwrap, no bash): said as its output, ended with no code.
        this.keep(Buffer.from(`failed to start ${line.file}: ${error.message}\n`));
        this.finish(undefined, undefined);
        resolve();
      });
      this.child.once('exit', (code, signal) => {
        // What it left behind in its group goes too, as run_bash does.
        this.killNow();
        this.finish(code ?? undefined, signal ?? undefined);
        resolve();
      });
    });
    this.closed = new Promise<void>((resolve) => {
      this.child.once('close', () => resolve());
      this.child.once('error', () => resolve());
    });
  }

  /** The process group's id (its leader's pid), once started. */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  /** How it ended, once it has. */
  get exit(): BackgroundExit | undefined {
    return this.ended;
  }

  /** The output since the last read (decoded as UTF-8, a character split between reads kept whole), and how it ended if it has. */
  read(): BackgroundRead {
    const bytes = Buffer.concat(this.chunks);
    this.chunks = [];
    this.unread = 0;
    const dropped = this.dropped;
    this.dropped = 0;
    const output = this.decoder.write(bytes) + (this.ended && this.child.stdout?.readableEnded !== false ? this.decoder.end() : '');
    return { output, dropped, ...(this.ended ? { exit: this.ended } : {}) };
  }

  /**
   * Stops the command: SIGTERM to its whole group, then SIGKILL after `graceMs` to whatever is
   * left. Resolves once the group's leader is gone and its output is read to the end (or, a process
   * that left the group holding it, SETTLE_MS later).
   */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.ended) this.handle.kill('SIGTERM');
    const timer = setTimeout(() => this.killNow(), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
    // The last of its output, unless a process that left the group holds the pipe: not waited on long.
    let settle: NodeJS.Timeout | undefined;
    await Promise.race([this.closed, new Promise<void>((resolve) => (settle = setTimeout(resolve, SETTLE_MS)))]);
    clearTimeout(settle);
  }

  /** SIGKILL to the whole group, at once (synchronous: usable in an exit handler). */
  killNow(): void {
    this.handle.kill();
  }

  // Keeps a chunk of output until it is read; past the bound, the oldest unread bytes go.
  private keep(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.unread += chunk.length;
    while (this.unread > MAX_UNREAD_BYTES && this.chunks.length > 0) {
      const over = this.unread - MAX_UNREAD_BYTES;
      const first = this.chunks[0]!;
      if (first.length <= over) {
        this.chunks.shift();
        this.unread -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(over);
        this.unread -= over;
        this.dropped += over;
      }
    }
  }

  private finish(code: number | undefined, signal: string | undefined): void {
    if (this.ended) return;
    this.ended = { ...(code !== undefined ? { code } : {}), ...(signal !== undefined ? { signal } : {}), at: new Date() };
    running.delete(this);
    // Its group is gone: the watchdog has nothing left to guard (and must never kill a reused group id).
    this.watchdog?.kill();
    this.onEnd?.();
  }
}
