// A shell started ahead of the command it will run. Starting a command costs a fork of this whole
// process (a page-table copy that grows with its memory: 2-10 ms on the main thread) and, in the
// sandbox, bubblewrap's namespaces and mounts (6-20 ms); none of it depends on the command. So the
// next command's process is started while this process would only wait: as the model is asked
// (`idle`: the run's next step is a model call, seconds in real use), or while a long command runs.
// Not at once beside a short command: the fork holds the main thread and the new sandbox's set-up
// competes with the command for the CPU, both on the way to the next request (a `true` turn took
// 2-4 ms longer). The spare is bubblewrap (or nothing) around a bash that waits for its script on a
// pipe (fd 3) and then execs `bash --norc --noprofile -c <script>`, the very command line a cold
// start runs (tools/sandbox.ts's BASH_STARTUP: the loader bash itself was started with it too), so the
// command sees the same $0, environment, signals and error messages. The spare runs nothing before
// it is handed a script: a crash of this process closes the pipe (the spare exits unrun) and
// bubblewrap's --die-with-parent takes the sandbox down.
import type { Writable } from 'node:stream';
import { startProcess, type CommandLine, type ProcessHandle } from '../os/processes.js';
import { BASH_STARTUP } from './sandbox.js';

/**
 * What the spare bash runs: read the whole script (fd 3, up to end of file; `-N` reads in blocks
 * where `-d` would read a byte at a time), and only when the pipe ended after a whole script (read
 * says 1 at end of file; the leading `x` proves the writer began) exec it as a cold start would.
 * Anything else (the writer died, the pipe closed empty) exits 125 having run nothing.
 */
export const SPARE_LOADER = `IFS= read -r -N 1000000000 s <&3; [ $? = 1 ] && [ "\${s:0:1}" = x ] || exit 125; exec 3<&-; exec "$0" ${BASH_STARTUP.join(' ')} -c "\${s:1}"`;

// Scripts longer than this start cold: `exec bash -c` of a very long one fails inside the spare
// (E2BIG) with other words than a cold spawn's, and bash reads a long one in many blocks anyway.
const SPARE_MAX_SCRIPT = 64 * 1024;

// A command still running after this long is a long one: the next spare starts beside it, as its
// fork and set-up are hidden by the command's own time (a second call of the same answer then
// finds it ready).
const LONG_COMMAND_MS = 20;

/** How SpareShells schedules its spares. */
export interface SpareShellOptions {
  /** After how long a command counts as long, and the next spare starts beside it (default 20 ms; 0: beside every command). */
  longCommandMs?: number;
}

interface Spare {
  handle: ProcessHandle;
  // What it was started as: a spare runs only a command that would start the same way.
  loader: CommandLine;
  cwd: string;
  dead: boolean;
}

/** Whether a spare's loader can run `script` (it reads it whole from a pipe: at most 64 KB, no NUL); else the command starts cold. */
export function fitsSpare(script: string): boolean {
  return script.length <= SPARE_MAX_SCRIPT && !script.includes('\0');
}

/**
 * At most one spare shell, for the next command of one run: a command `take`s it, then `want`s one
 * for the command after, started at the run's next `idle` or beside a long command. The run that
 * owns it closes it at its end; until taken, a spare keeps no event loop alive.
 */
export class SpareShells {
  private spare: Spare | undefined;
  private closed = false;
  // The spare wanted next (`want`), started at the next `idle` or once the current command proves long.
  private wanted: { loader: CommandLine; cwd: string; timer: NodeJS.Timeout } | undefined;
  private readonly longCommandMs: number;

  constructor(options: SpareShellOptions = {}) {
    this.longCommandMs = options.longCommandMs ?? LONG_COMMAND_MS;
  }

  /**
   * The spare started for `loader` (the command line that runs SPARE_LOADER: the same program,
   * arguments and environment as a cold start of this command would have), to run `script` once
   * `start` is called (the caller records its process group first; `abandon` stops it when that
   * fails); undefined when there is none that fits, and the caller starts the command cold.
   */
  take(loader: CommandLine, cwd: string, script: string): { handle: ProcessHandle; start(): void; abandon(): void } | undefined {
    const spare = this.spare;
    this.spare = undefined;
    this.forgetWanted(); // this command's caller says what it wants next
    if (!spare) return undefined;
    // No pid: its spawn failed, and the 'error' saying so is still on its way.
    if (spare.dead || !spare.handle.running || !sameCommand(spare, loader, cwd) || !fitsSpare(script)) {
      stop(spare);
      return undefined;
    }
    const { handle } = spare;
    handle.keepAlive(true); // a running command keeps the process alive, as a cold one does
    const input = handle.child.stdio[3] as Writable;
    // abandon: the caller could not record it (it ran nothing), so it must not wait on for ever.
    return { handle, start: () => void input.end(`x${script}`), abandon: () => stop(spare) };
  }

  /**
   * Asks for a spare for the next command run by `loader` in `cwd`, started at the next `idle`, or
   * once the command proves long (running `longCommandMs` before its `commandEnded`), whichever
   * comes first. `prepare` copies the command line when it starts the spare (an environment changed
   * meanwhile is then the one the next command would get too; `take` compares them anyway).
   */
  want(loader: CommandLine, cwd: string): void {
    this.forgetWanted();
    if (this.closed || this.spare) return;
    const timer = setTimeout(() => this.startWanted(), this.longCommandMs).unref();
    this.wanted = { loader, cwd, timer };
  }

  /** Says the command that asked for the next spare ended: it was not a long one, so only `idle` starts that spare. */
  commandEnded(): void {
    if (this.wanted) clearTimeout(this.wanted.timer);
  }

  /**
   * Says this process is about to wait (the run asks its model): the spare wanted is started once
   * the work at hand has run (setImmediate), while the model answers.
   */
  idle(): void {
    if (this.wanted) setImmediate(() => this.startWanted()).unref();
  }

  /** Starts the spare for the next command run by `loader` in `cwd`, unless one is ready or the owner closed. */
  prepare(loader: CommandLine, cwd: string): void {
    if (this.closed || this.spare) return;
    // A copy: unconfined, the environment is process.env itself, which may change before the command.
    const started = { ...loader, env: { ...loader.env } };
    let handle: ProcessHandle;
    try {
      // A group of its own, as a cold start's; until taken it holds no event loop open.
      handle = startProcess(started.file, started.args, {
        cwd,
        env: started.env,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        group: true,
        keepAlive: false,
      });
    } catch {
      return; // the cold start will say what is wrong
    }
    const spare: Spare = { handle, loader: started, cwd, dead: false };
    // Never started (no bwrap: the cold start reports it), or ended.
    void handle.exited.then(() => (spare.dead = true));
    (handle.child.stdio[3] as Writable).on('error', () => {});
    this.spare = spare;
  }

  /** Stops the spare, if any, and starts no more; resolves once it has exited. */
  close(): Promise<void> {
    this.closed = true;
    this.forgetWanted();
    const spare = this.spare;
    this.spare = undefined;
    if (!spare) return Promise.resolve();
    spare.handle.keepAlive(true); // its exit must be waited for by whoever awaits this
    stop(spare);
    return spare.handle.exited.then(() => undefined);
  }

  private startWanted(): void {
    const wanted = this.wanted;
    this.forgetWanted();
    if (wanted) this.prepare(wanted.loader, wanted.cwd);
  }

  private forgetWanted(): void {
    if (this.wanted) clearTimeout(this.wanted.timer);
    this.wanted = undefined;
  }
}

// Whether `spare` was started as `loader` in `cwd` would be now (the environment can change between commands).
function sameCommand(spare: Spare, loader: CommandLine, cwd: string): boolean {
  const was = spare.loader;
  if (
    spare.cwd !== cwd ||
    was.file !== loader.file ||
    was.args.length !== loader.args.length ||
    was.args.some((arg, i) => arg !== loader.args[i])
  )
    return false;
  const names = Object.keys(loader.env);
  return names.length === Object.keys(was.env).length && names.every((name) => was.env[name] === loader.env[name]);
}

function stop(spare: Spare): void {
  spare.dead = true;
  spare.handle.kill();
  const { child } = spare.handle;
  for (const stream of [child.stdout, child.stderr, child.stdio[3]]) (stream as { destroy?: () => void } | null)?.destroy?.();
}
