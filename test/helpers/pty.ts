// The real CLI on a real pseudo-terminal through util-linux `script`, which runs it on a pty and
// passes keystrokes to it, for the tests of what a terminal sees (the live view, the approval
// prompt, escapes from outside). Everything the pty printed comes back raw, escapes and all.
//
//   const tty = await onPty(['run', '--yes', 'fix it'], repo.root, [{ after: /Allow\?/, send: 'y\r' }]);
//   assert.match(plain(tty.out), /Final answer/);
import { spawn, spawnSync } from 'node:child_process';
import { BIN, baseEnv } from './cli.js';

/** Whether `script` is installed; tests on a pty are skipped with this reason when it is not. */
export const PTY_SKIP = spawnSync('script', ['--version']).status === 0 ? false : 'util-linux `script` is not installed: it gives the CLI a pseudo-terminal';

/** `text` without savepoint's own CSI sequences (colours, cursor movement) and carriage returns. */
// eslint-disable-next-line no-control-regex
export const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** Runs `savepoint <args>` on a 160x40 pty in `cwd`; each answer is typed once its `after` pattern has appeared. */
export async function onPty(args: string[], cwd: string, answers: Array<{ after: RegExp; send: string }> = [], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const command = `stty cols 160 rows 40; exec ${[process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')}`;
  const env = { ...baseEnv(), TERM: 'xterm-256color', ...extraEnv } as Record<string, string>;
  delete env.NO_COLOR;
  const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const pending = [...answers];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    while (pending[0] && pending[0].after.test(plain(out))) child.stdin.write(pending.shift()!.send);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, out };
}
