// A terminal that hangs up under savepoint (its window closed): the process ends as itself, with
// exit 130 as for SIGHUP, where Node 20's restore of the dead terminal's mode aborted it (SIGABRT,
// src/cli/terminal/hangup.ts). The terminal is a real pseudo-terminal whose other end is closed,
// as a terminal emulator closes it: python3's pty module, which also reports how the CLI ended.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { baseEnv, BIN } from '../../helpers/cli.js';
import { useScratch } from '../../helpers/scratch.js';

const NO_PYTHON = spawnSync('python3', ['-c', 'import pty']).status === 0 ? false : 'python3 with its pty module is not installed: it closes the pseudo-terminal';

// Starts the command on a new pty, waits for `ready` in what it shows, types `typed`, closes the
// pty's other end (the hang-up) and prints how the command ended as JSON.
const HANG_UP = `
import json, os, pty, re, select, sys, time
ready, typed, command = re.compile(sys.argv[1].encode()), sys.argv[2].encode(), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
shown, deadline = b'', time.time() + 60
while not ready.search(shown):
    if time.time() > deadline:
        sys.exit('never showed ' + sys.argv[1] + ': ' + shown.decode(errors='replace'))
    if select.select([fd], [], [], 1)[0]:
        shown += os.read(fd, 65536)
os.write(fd, typed)
while typed and typed.decode() not in re.sub(r'\\x1b\\[[0-9;?]*[A-Za-z]', '', shown.decode(errors='replace')):
    if time.time() > deadline:
        sys.exit('never echoed what was typed: ' + shown.decode(errors='replace'))
    if select.select([fd], [], [], 1)[0]:
        shown += os.read(fd, 65536)
os.close(fd)
_, status = os.waitpid(pid, 0)
print(json.dumps({'signal': os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, 'code': os.WEXITSTATUS(status) if os.WIFEXITED(status) else None}))
`;

const scratch = useScratch();

async function hangUp(cwd: string, args: string[], ready: RegExp, typed = ''): Promise<{ signal: number | null; code: number | null }> {
  const env = { ...baseEnv(), TERM: 'xterm-256color', XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
  const child = spawn('python3', ['-c', HANG_UP, ready.source, typed, process.execPath, BIN, ...args], { cwd, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  return JSON.parse(out) as { signal: number | null; code: number | null };
}

describe('a terminal that hangs up', { skip: NO_PYTHON }, () => {
  test('under a session at its prompt: it ends with exit 130, not Node abort, and the line typed is kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# hang-up\n' });
    const ended = await hangUp(repo.root, ['--yes', '--no-sandbox'], /›/, 'typed in a window that closed');
    assert.deepEqual(ended, { signal: null, code: 130 });
    const dir = join(repo.root, '.git', 'savepoint', 'unsent');
    const kept = readdirSync(dir).filter((name) => name.endsWith('.json'));
    assert.equal(kept.length, 1);
    assert.deepEqual((JSON.parse(readFileSync(join(dir, kept[0]!), 'utf8')) as { texts: string[] }).texts, ['typed in a window that closed']);
  });

  test("under a run at its approval question: it ends with exit 130, the call not made", async () => {
    const repo = await scratch.repo({ 'README.md': '# hang-up\n' });
    const script = join(scratch.dir('savepoint-script-'), 'model.json');
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'x\n' } }] }, { text: 'done' }] }));
    const ended = await hangUp(repo.root, ['run', '--no-sandbox', '--model', `script:${script}`, 'write notes'], /Allow write_file notes\.txt\?/);
    assert.deepEqual(ended, { signal: null, code: 130 });
    assert.throws(() => readFileSync(join(repo.root, 'notes.txt')), /ENOENT/);
  });
});
