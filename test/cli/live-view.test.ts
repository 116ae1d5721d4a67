// The live view and the approval prompt on a real pseudo-terminal (util-linux `script`, which runs
// the CLI on a pty and passes our keystrokes to it): a running command shows its elapsed time and
// its last output lines, redrawn in place; off a terminal none of that is printed. A busy model
// service's retry-after is counted down on the model step's line. The prompt shows
// the diff of an edit, the head of a write and the command; "n <reason>" reaches the model in the
// declined result; Ctrl-C at the prompt exits 130 with no "unexpected error", and the next run says
// the previous attempt was interrupted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { BIN, assertNoStack, baseEnv, gitOut, journalJson, journalPaths, runCli } from '../helpers/cli.js';

const scratch = useScratch();
const HAVE_SCRIPT = spawnSync('script', ['--version']).status === 0;
const SKIP = HAVE_SCRIPT ? false : 'util-linux `script` is not installed: it gives the CLI a pseudo-terminal';
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

// Runs `savepoint <args>` on a pty; each answer is typed once its `after` pattern has appeared.
async function onPty(args: string[], cwd: string, answers: Array<{ after: RegExp; send: string }> = [], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
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

function script(dir: string, turns: unknown[]): string {
  const path = join(dir, 'model.json');
  writeFileSync(path, JSON.stringify({ turns }));
  return `script:${path}`;
}

describe('on a terminal', { concurrency: true, skip: SKIP }, () => {
  test('a running command shows its elapsed time and its last output lines, dimmed; off a terminal nothing of it', async () => {
    const repo = await scratch.repo({ 'README.md': '# live\n' });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'run_bash', input: { command: 'for i in 1 2 3 4 5 6; do echo line $i; sleep 0.25; done' } }] },
      { text: 'Counted.' },
    ]);
    const tty = await onPty(['run', '--yes', '--model', model, 'count on a tty'], repo.root);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /\x1b\[2m {6}│ line 3\x1b\[22m/, 'output lines are shown dimmed under the step');
    assert.match(plain(tty.out), /run_bash "for i in .*· running · \d+(\.\d)? (ms|s)/, 'the step shows it is running, with its elapsed time');
    assert.match(tty.out, /\r(\x1b\[\d+A)?\x1b\[J/, 'the block is redrawn in place');
    assert.match(plain(tty.out), /model turn 1 · waiting for the model · \d+ ms/, 'a model call shows it is working too');
    assert.match(plain(tty.out), /#2 {2}LIVE \(running now\) +run_bash/);
    assert.match(plain(tty.out), /Tokens [\d,]+ in, [\d,]+ out \(scripted model: no cost\) · 2 model calls · 3 steps \(0 replayed, 3 live\)/);

    const piped = await runCli(['run', '--yes', '--model', model, 'count in a pipe'], { cwd: repo.root });
    assert.equal(piped.code, 0, piped.stderr);
    assert.doesNotMatch(piped.stdout, /│ line|· running ·|\x1b\[/);
  });

  test("a 429's retry-after is counted down on the model step's line, then the run goes on", async () => {
    const repo = await scratch.repo({ 'README.md': '# busy\n' });
    const fake = await scratch.fake([{ text: 'Answered after the wait.' }]);
    fake.failNext(429, 1, { retryAfter: 3 });
    const tty = await onPty(['run', '--yes', 'wait for it'], repo.root, [], { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'test-key' });
    assert.equal(tty.code, 0, tty.out);
    const shown = plain(tty.out);
    assert.match(shown, /The model service is busy \(the API answered 429 rate_limit_error\): asking again in 3 s/);
    assert.match(shown, /model turn 1 · the service is busy: asking again in 3 s/);
    assert.match(shown, /model turn 1 · the service is busy: asking again in 1 s/, 'the seconds count down');
    assert.match(shown, /Answered after the wait\./);
    assert.equal(fake.requests.length, 2);
  });

  test('the prompt shows the diff, the write and the command; "n <reason>" reaches the model; Ctrl-C exits 130 and the next run says it was interrupted', async () => {
    const repo = await scratch.repo({ 'README.md': '# live\n', 'app.js': 'const port = 80;\n' });
    const model = script(scratch.dir(), [
      { tools: [{ name: 'edit_file', input: { path: 'app.js', old_string: 'port = 80', new_string: 'port = 8080' } }] },
      { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'first line\nsecond line\n' } }] },
      { tools: [{ name: 'run_bash', input: { command: 'echo add left-pad' } }] },
      { text: 'Done.' },
    ]);
    const args = ['run', '--model', model, 'change the port'];
    const first = await onPty(args, repo.root, [
      { after: /Allow edit_file app\.js\?/, send: 'y\r' },
      { after: /Allow write_file notes\.txt\?/, send: 'n keep notes out of the repo\r' },
      { after: /Allow run_bash "echo add left-pad"\?/, send: '\x03' },
    ]);
    const out = plain(first.out);
    assert.match(out, /edit app\.js:\n +@@ .* @@\n +-port = 80\n +\+port = 8080\n/, 'the edit is shown as a diff');
    assert.match(out, /write notes\.txt \(2 lines, 23 bytes\):\n +first line\n +second line/, 'the head of the write');
    assert.match(out, /\$ echo add left-pad\n +Allow run_bash/, 'the command in full');
    assert.match(out, /#4 {2}DECLINED \(not run\) +write_file notes\.txt +→ declined: keep notes out of the repo/);
    assert.equal(first.code, 130, out);
    assert.doesNotMatch(out, /unexpected error|please report/);
    assertNoStack(out);

    const paths = await journalPaths(repo.root);
    const declined = paths.find((p) => p.endsWith('000004-write_file.json'))!;
    const entry = await journalJson<{ resolution: string; result: { output: string } }>(repo.root, declined);
    assert.equal(entry.resolution, 'declined');
    assert.match(entry.result.output, /The user declined this tool call, saying: keep notes out of the repo/);
    const run = await journalJson<{ attempts: Array<{ interruptedAt?: string }> }>(repo.root, paths.find((p) => p.endsWith('/run.json'))!);
    assert.ok(run.attempts[0]!.interruptedAt, 'run.json notes the attempt was interrupted');

    const again = await runCli(['run', '--yes', '--model', model, 'change the port'], { cwd: repo.root });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /The previous attempt was stopped by a signal \(Ctrl-C, SIGTERM or SIGHUP\), not crashed/);
    assert.doesNotMatch(again.stdout, /crash(ed)? and|before a crash/);
    assert.match((await runCli(['log'], { cwd: repo.root })).stdout, /attempt 1 · live from #1 · interrupted ·/);
  });

  test('Ctrl-C at the drift question stops like Ctrl-C anywhere: exit 130, nothing changed', async () => {
    const repo = await scratch.repo({ 'README.md': '# live\n' });
    const model = script(scratch.dir(), [{ tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] }, { text: 'Wrote it.' }]);
    assert.equal((await runCli(['run', '--yes', '--max-steps', '2', '--model', model, 'write a'], { cwd: repo.root })).code, 3); // 3: stopped at --max-steps
    writeFileSync(join(repo.root, 'a.txt'), 'changed by hand\n');
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    const asked = await onPty(['run', '--yes', '--model', model, 'write a'], repo.root, [{ after: /Restore the files as the run recorded them\?/, send: '\x03' }]);
    assert.equal(asked.code, 130, plain(asked.out));
    assert.doesNotMatch(plain(asked.out), /unexpected error|please report/);
    assertNoStack(plain(asked.out));
    assert.equal(readFileSync(join(repo.root, 'a.txt'), 'utf8'), 'changed by hand\n');
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'nothing was written');
  });
});

