// A command that runs in the background (run_bash's `run_in_background`): its own process group,
// its output (stdout and stderr together) kept in memory until read, and never outliving this
// process. Three things hold that last promise, each covering what the one before cannot:
//   - a watchdog in the command's own group, `read` on a pipe (fd 3) whose other end only this
//     process holds: when this process dies, by any means (kill -9 included), the kernel closes its
//     end, the read sees end of file, and the watchdog kills its whole group (`kill -KILL 0`);
//   - in the sandbox, bubblewrap's --die-with-parent and its pid namespace (see tools/sandbox.ts),
//     bubblewrap being this process's own child (never a spare shell's, which is another process);
//   - this process's own exit (a run that ends, /exit, Ctrl-C) kills every group it still has.
// A process that leaves the group on purpose (setsid, a daemon) escapes the first and third
// outside the sandbox, as it escapes run_bash; the next attempt's live-commands cleanup is the
// last line there.
import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { Writable } from 'node:stream';
import type { CommandLine } from './spare-shell.js';

/**
 * How much unread output one background command keeps (bytes): past it, the oldest unread bytes
 * are dropped and the next read says how many. Bounded so a chatty server cannot grow memory.
 */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/**
 * The lines put before a background command's script: the watchdog (started in the background, in
 * the command's group, holding fd 3), then fd 3 closed for the command itself. `read -N 1` returns
 * only at end of file: nothing is ever written to the pipe.
 */
export const WATCHDOG = '{ read -r -N 1 _ <&3; kill -KILL 0; } & exec 3<&-; ';

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
  readonly child: ChildProcess;
  readonly startedAt = new Date();
  private chunks: Buffer[] = [];
  private unread = 0;
  private dropped = 0;
  private readonly decoder = new StringDecoder('utf8');
  private ended: BackgroundExit | undefined;
  private readonly closed: Promise<void>;
  private readonly onEnd: (() => void) | undefined;

  /**
   * Starts `line` (a command line that runs WATCHDOG and then the command with bash, sandboxed or
   * not) in `cwd`. `onEnd` is told once the command has ended and its group is gone.
   */
  constructor(line: CommandLine, cwd: string, onEnd?: () => void) {
    this.onEnd = onEnd;
    if (!exitHookSet) {
      exitHookSet = true;
      process.on('exit', killBackgroundProcesses);
    }
    // fd 3: the watchdog's pipe. stdin is empty (end of file), as for run_bash.
    this.child = spawn(line.file, line.args, { cwd, env: line.env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    running.add(this);
    // Never keeps this process alive on its own: a run that ends, ends (and stops it, see above).
    this.child.unref();
    for (const stream of [this.child.stdout, this.child.stderr, this.child.stdio[3]]) (stream as { unref?: () => void } | null)?.unref?.();
    (this.child.stdio[3] as Writable).on('error', () => {});
    const keep = (chunk: Buffer) => this.keep(chunk);
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.closed = new Promise<void>((resolve) => {
      this.child.once('error', (error) => {
        // It never started (no bwrap, no bash): said as its output, ended with no code.
        this.keep(Buffer.from(`failed to start ${line.file}: ${error.message}\n`));
        this.finish(undefined, undefined);
        resolve();
      });
      this.child.once('exit', (code, signal) => {
        // What it left behind in its group goes too (the watchdog among them), as run_bash does.
        this.killNow();
        this.finish(code ?? undefined, signal ?? undefined);
      });
      this.child.once('close', () => resolve());
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
   * left. Resolves once the group's leader is gone and its output is read to the end.
   */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.ended) signalGroup(this.pgid, 'SIGTERM');
    const timer = setTimeout(() => this.killNow(), graceMs);
    try {
      await this.closed;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL to the whole group, at once (synchronous: usable in an exit handler). */
  killNow(): void {
    signalGroup(this.pgid, 'SIGKILL');
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
    (this.child.stdio[3] as Writable | null)?.destroy();
    this.onEnd?.();
  }
}

function signalGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pgid) process.kill(-pgid, signal);
  } catch {
    // the group is already empty
  }
}
