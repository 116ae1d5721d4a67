// The real CLI on a pseudo-terminal (util-linux `script`, which runs the command on a pty and passes
// our keystrokes to it), for the tests of what a person sees and answers:
//
//   const { code, out } = await onPty(['run', '--model', model, 'fix it'], repo.root, [{ after: /Allow edit_file/, send: 'y\r' }]);
//   plain(out)                                   // the screen's text without escapes or carriage returns
import { spawn, spawnSync } from 'node:child_process';
import { BIN, baseEnv } from './cli.js';

/** Whether `script` is here; a test skips with SKIP_NO_PTY when it is not. */
export const HAVE_SCRIPT = spawnSync('script', ['--version']).status === 0;
export const SKIP_NO_PTY = HAVE_SCRIPT ? false : 'util-linux `script` is not installed: it gives the CLI a pseudo-terminal';

/** The text of terminal output: colour and cursor escapes and carriage returns taken out. */
export const plain = (text: string): string => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** The pty's size, and what is added to the test's clean environment. */
export interface PtyOptions {
  cols?: number;
  rows?: number;
  env?: Record<string, string>;
}

/** A CLI running on a pty: what it printed so far, typing into it, and its end. */
export interface PtyProcess {
  /** Everything the pty showed so far, escapes and all (see `plain`). */
  readonly out: string;
  /** Types `text` on the terminal (`\x03` is Ctrl-C: the terminal sends SIGINT to the CLI). */
  type(text: string): void;
  result: Promise<{ code: number | null; out: string }>;
}

/** Starts `savepoint <args>` on a pty in `cwd`; each answer is typed once its `after` pattern has appeared. */
export function startOnPty(args: string[], cwd: string, answers: Array<{ after: RegExp; send: string }> = [], options: PtyOptions = {}): PtyProcess {
  const command = `stty cols ${options.cols ?? 160} rows ${options.rows ?? 40}; exec ${[process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')}`;
  const env = { ...baseEnv(), TERM: 'xterm-256color', ...(options.env ?? {}) } as Record<string, string>;
  delete env.NO_COLOR;
  if (options.cols) env.COLUMNS = String(options.cols);
  const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const pending = [...answers];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    while (pending[0] && pending[0].after.test(plain(out))) child.stdin.write(pending.shift()!.send);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // A safety net, as startCli's (180 s): one CLI run on the loaded 2-core machine took 40 s.
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const result = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
  return {
    get out() {
      return out;
    },
    type: (text) => void child.stdin.write(text),
    result,
  };
}

/** Runs `savepoint <args>` on a pty in `cwd` to its end; each answer is typed once its `after` pattern has appeared. */
export function onPty(args: string[], cwd: string, answers: Array<{ after: RegExp; send: string }> = [], options: PtyOptions = {}): Promise<{ code: number | null; out: string }> {
  return startOnPty(args, cwd, answers, options).result;
}
