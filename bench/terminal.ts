// What the session benchmarks share to drive a program's TUI: a tmux terminal of its own, and the
// arrival times of a fake server's requests.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { now } from './lib.js';

/** A program running in a tmux server of its own (a socket per terminal), driven by send-keys and read by capture-pane. */
export interface Terminal {
  /** The pane's text; with `history`, its scrollback too. */
  screen(history?: boolean): string;
  /** Polls the pane (scrollback included unless `visibleOnly`) until `pattern` matches it. */
  waitFor(pattern: RegExp, timeoutMs?: number, visibleOnly?: boolean): Promise<void>;
  /** Types `text` literally. */
  text(text: string): void;
  /** Presses Enter. */
  enter(): void;
  /**
   * Ends tmux's server, which hangs up on the program, and resolves once the program has exited
   * (at most 10 s): the next measurement neither shares the CPU with its exit nor misses what it
   * leaves as it exits (savepoint's compiled code, kept for the next start).
   */
  close(): Promise<void>;
}

/** A tmux terminal of its own running `node <script> <args>` in `cwd`, with exactly this process's environment and `env`. */
export function terminal(script: string, cwd: string, args: string[], env: Record<string, string | undefined>): Terminal {
  return terminalCommand([process.execPath, script, ...args], cwd, env);
}

/** A tmux terminal of its own running the program `argv` in `cwd`, with this process's environment and `env` (an undefined value unsets a variable). */
export function terminalCommand(argv: string[], cwd: string, env: Record<string, string | undefined>): Terminal {
  const socket = `sp-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const q = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
  const vars = Object.entries({ ...process.env, ...env, TERM: 'xterm-256color' }).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  tmux('new-session', '-d', '-x', '160', '-y', '50', 'env', '-i', ...vars, 'bash', '-c', `cd ${q(cwd)} && exec ${argv.map(q).join(' ')}`);
  // The pane's process: bash, which execs the program, so the program's pid.
  const pid = Number(tmux('display-message', '-p', '-t', '0', '#{pane_pid}').trim());
  const screen = (history = true) => tmux('capture-pane', '-p', '-J', ...(history ? ['-S', '-3000'] : []), '-t', '0');
  return {
    screen,
    async waitFor(pattern: RegExp, timeoutMs = 300_000, visibleOnly = false): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(screen(!visibleOnly))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${screen(false)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    text: (text: string) => void tmux('send-keys', '-t', '0', '-l', text),
    enter: () => void tmux('send-keys', '-t', '0', 'Enter'),
    close: async () => {
      try {
        tmux('kill-server');
      } catch {
        // gone already
      }
      const deadline = Date.now() + 10_000;
      while (running(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    },
  };
}

// Whether process `pid` is still there and not a zombie (the hung-up program is reparented, then reaped).
function running(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Arrival times of a fake server's requests (pass `gate` as its gate), in order. */
export function arrivals(): { gate: (index: number) => undefined; at: number[] } {
  const at: number[] = [];
  return { at, gate: () => void at.push(now()) };
}

/** Resolves once `at` holds more than `count` arrivals (polled on every turn of the event loop: no timer's granularity in the figure). */
export async function arrivalAfter(at: readonly number[], count: number, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (at.length <= count) {
    if (Date.now() > deadline) throw new Error(`no request ${count + 1} at the server within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return at[count]!;
}
