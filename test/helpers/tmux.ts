// The real CLI in a real pseudo-terminal, through tmux on a socket of the test's own (so a test
// never touches anyone else's tmux), for the interactive session's tests:
//
//   const term = await openTerminal(['--yes'], { cwd: repo.root, env: fakeEnv(fake) });
//   await term.type('fix the test');               // the keys, then Enter
//   await term.waitFor(/answers "/);               // polls capture-pane
//   term.kill9();                                  // SIGKILL to the savepoint process
//   await term.close();
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { BIN, baseEnv } from './cli.js';
import type { Scratch } from './scratch.js';

export interface Terminal {
  /** Types `text` and presses Enter. */
  type(text: string): void;
  /** Sends tmux key names (C-c, C-d, Enter). */
  keys(...names: string[]): void;
  /** Pastes `text` as a terminal pastes it: its line breaks as carriage returns, bracketed (ESC[200~ … ESC[201~) when the program asked for bracketed paste; no Enter after it. */
  paste(text: string): void;
  /** The whole screen and scrollback as text. */
  screen(): string;
  /** Waits until the screen matches `pattern`; resolves with the screen. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The savepoint process's exit code once it has ended, or undefined while it runs. */
  exitCode(): number | undefined;
  /** SIGKILL to the savepoint process. */
  kill9(): void;
  /** `signal` to the savepoint process (SIGHUP: as when its terminal is closed). */
  signal(signal: NodeJS.Signals): void;
  close(): void;
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

// The pane's title once savepoint has ended and the terminal has shown all it printed.
const EXITED_TITLE = 'savepoint-exited';

/** Starts `savepoint <args>` in a 120x40 terminal in `cwd`; its pid and exit code are written under `scratchDir`. */
export function openTerminal(args: string[], options: { cwd: string; env?: Record<string, string | undefined>; scratchDir: string }): Terminal {
  const socket = `sp-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const env: Record<string, string> = { ...baseEnv(), TERM: 'xterm-256color' };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const pidFile = join(options.scratchDir, `${socket}.pid`);
  const codeFile = join(options.scratchDir, `${socket}.code`);
  // The shell starts savepoint as a job and brings it to the foreground (job control: `set -m`),
  // so that it has the terminal and Ctrl-C; then records its exit code, and the pane stays for
  // capture-pane. `$!` is savepoint itself (the subshell execs it). Then it sets the pane's title
  // (an escape the screen does not show): tmux reads the terminal in order, so once the title is
  // there, so is everything savepoint printed before it ended (the exit code's file alone came
  // before tmux had read savepoint's last words, on a loaded machine).
  const script = `set -m; cd ${quote(options.cwd)} || exit; (exec ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}) & echo $! > ${quote(pidFile)}; fg; echo $? > ${quote(codeFile)}; printf '\\033]2;${EXITED_TITLE}\\033\\\\'; sleep 600`;
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
  tmux('new-session', '-d', '-x', '120', '-y', '40', 'env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'bash', '-c', script);
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const term: Terminal = {
    type(text) {
      tmux('send-keys', '-t', '0', '-l', text);
      tmux('send-keys', '-t', '0', 'Enter');
    },
    keys(...names) {
      tmux('send-keys', '-t', '0', ...names);
    },
    paste(text) {
      tmux('set-buffer', '-b', 'test-paste', '--', text);
      tmux('paste-buffer', '-p', '-d', '-b', 'test-paste', '-t', '0');
    },
    screen() {
      return tmux('capture-pane', '-p', '-J', '-S', '-2000', '-t', '0');
    },
    async waitFor(pattern, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = term.screen();
        if (pattern.test(screen)) return screen;
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${pattern} on the terminal:\n${screen}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    exitCode() {
      const code = read(codeFile);
      if (code === undefined || code === '') return undefined;
      let title: string | undefined;
      try {
        title = tmux('display-message', '-p', '-t', '0', '#{pane_title}').trim();
      } catch {
        // the terminal was closed: what it showed is gone with it
      }
      return title === undefined || title === EXITED_TITLE ? Number(code) : undefined;
    },
    kill9() {
      term.signal('SIGKILL');
    },
    signal(signal) {
      const pid = Number(read(pidFile));
      assert.ok(pid > 0, 'the savepoint process wrote its pid');
      process.kill(pid, signal);
    },
    close() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
  return term;
}

/** Waits for the session in `term` to end (60 s at the most, else the test fails showing the screen); resolves with its exit code. */
export async function exited(term: Terminal): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (term.exitCode() === undefined) {
    if (Date.now() > deadline) assert.fail(`the session did not end:\n${term.screen()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return term.exitCode()!;
}

/**
 * `savepoint <args>` on a terminal as the session tests open it: its files under `scratch`, a
 * settings folder of its own (XDG_CONFIG_HOME) unless `env` names one, closed when the test ends.
 */
export function openSession(scratch: Scratch, args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Terminal {
  const env = { XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-'), ...options.env };
  const term = openTerminal(args, { cwd: options.cwd, env, scratchDir: scratch.dir('savepoint-tmux-') });
  scratch.defer(() => term.close());
  return term;
}
