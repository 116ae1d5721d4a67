// The README's library example is a runnable file; this runs it as a user would, crash included.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const example = fileURLToPath(new URL('../examples/durable-steps.mjs', import.meta.url));
const agentExample = fileURLToPath(new URL('../examples/agent-run.mjs', import.meta.url));

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-example-'));
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir });
  return dir;
}

function runExample(cwd: string, killWhen?: RegExp, file = example): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (killWhen?.test(out)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (chunk: Buffer) => (out += chunk));
    child.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

test('the library example replays every step on its second run', async () => {
  const dir = repo();
  const first = await runExample(dir);
  assert.equal(first.code, 0, first.out);
  assert.match(first.out, /#1 LIVE \(running now\)\s+load_config/);
  const second = await runExample(dir);
  assert.equal(second.code, 0, second.out);
  assert.match(second.out, /#1 REPLAYED \(from journal\) load_config/);
  assert.match(second.out, /#2 REPLAYED \(from journal\) deploy/);
  assert.doesNotMatch(second.out, /LIVE/);
});

test('the library example killed during its unsafe step reports it in flight instead of redoing it', async () => {
  const dir = repo();
  const killed = await runExample(dir, /#1 LIVE/);
  assert.equal(killed.signal, 'SIGKILL');
  // The kill lands after step 1 is committed and (after 1.5 s at most) during step 2's run.
  const log = execFileSync('git', ['log', '--format=%s', 'agent-journal'], { cwd: dir, encoding: 'utf8' });
  assert.match(log, /#1 load_config app.json -> port 8080/);
  const resumed = await runExample(dir);
  assert.equal(resumed.code, 0, resumed.out);
  assert.match(resumed.out, /#1 REPLAYED \(from journal\) load_config/);
  if (/#2 deploy on port 8080 \(started\)/.test(log)) {
    assert.match(resumed.out, /#2 LIVE \(running now\)\s+deploy on port 8080 -> outcome unknown/);
    assert.match(resumed.out, /interrupted, check it by hand/);
  } else {
    assert.match(resumed.out, /#2 LIVE \(running now\)\s+deploy on port 8080 -> deployed/);
  }
  execFileSync('git', ['fsck', '--strict'], { cwd: dir, stdio: 'pipe' });
});

test('the agent example runs the model and its tools live, then replays them all with no model call', async () => {
  const dir = repo();
  const first = await runExample(dir, undefined, agentExample);
  assert.equal(first.code, 0, first.out);
  assert.match(first.out, /#1 LIVE \(running now\)\s+model turn 1 -> calls write_file/);
  assert.match(first.out, /#2 LIVE \(running now\)\s+write_file hello\.txt/);
  assert.match(first.out, /finished: hello\.txt now says hello\. \(0 replayed, 5 live\)/);
  assert.equal(readFileSync(join(dir, 'hello.txt'), 'utf8'), 'hello from the agent\n');
  const second = await runExample(dir, undefined, agentExample);
  assert.equal(second.code, 0, second.out);
  assert.doesNotMatch(second.out, /LIVE/);
  assert.match(second.out, /#5 REPLAYED \(from journal\) model turn 3/);
  assert.match(second.out, /\(5 replayed, 0 live\)/);
  const subjects = execFileSync('git', ['log', '--format=%s', 'agent-journal'], { cwd: dir, encoding: 'utf8' });
  assert.match(subjects, /#2 write_file hello\.txt/);
  execFileSync('git', ['fsck', '--strict'], { cwd: dir, stdio: 'pipe' });
});
