// savepoint's own git never runs what a sandboxed command planted: a command in the real
// bubblewrap sandbox turns a submodule that was not checked out into a repository of its own whose
// config sets core.fsmonitor to a program, then the run's checkpoint (savepoint's `git status`,
// run on the host, outside the sandbox) must not run it. The run still records its step.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { runCli } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const hasBwrap = ['/usr/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));

test('an fsmonitor hook a sandboxed command set in a nested git dir never runs on the host', { skip: !hasBwrap && 'bubblewrap is not installed' }, async () => {
  const dir = scratch.dir('savepoint-planted-');
  const lib = join(dir, 'lib');
  await gitOut(dir, ['init', '-q', '-b', 'main', lib]);
  await gitOut(lib, ['commit', '-q', '--allow-empty', '-m', 'lib']);
  const top = join(dir, 'top');
  await gitOut(dir, ['init', '-q', '-b', 'main', top]);
  await gitOut(top, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib']);
  writeFileSync(join(top, 'README.md'), '# project\n');
  await gitOut(top, ['add', '-A']);
  await gitOut(top, ['commit', '-q', '-m', 'the project']);
  // A clone without --recurse-submodules: lib/ is an empty directory, its gitlink in the index.
  const root = join(dir, 'clone');
  await gitOut(dir, ['clone', '-q', top, root]);
  const planted = join(dir, 'planted-ran');
  const command = `git -C lib init -q && echo x > lib/f && git -C lib add f && git -C lib config core.fsmonitor 'touch ${planted}; false' && echo planted`;
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command } }] }, { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'done' }] }));
  const result = await runCli(['run', '--yes', '--model', `script:${script}`, 'plant a hook'], { cwd: root });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /exit 0: planted/);
  assert.ok(existsSync(join(root, 'lib', '.git', 'config')), 'the command made its git dir');
  assert.ok(!existsSync(planted), 'the planted fsmonitor hook ran on the host');
  // The steps are recorded all the same.
  const files = await gitOut(root, ['ls-tree', '-r', '--name-only', 'agent-journal']);
  const run = files.split('\n').find((f) => f.endsWith('/run.json'))!;
  assert.equal((JSON.parse(await gitOut(root, ['show', `agent-journal:${run}`])) as { sandbox: { kind: string } }).sandbox.kind, 'bwrap', 'the command ran in the sandbox');
  assert.match(files, /000002-run_bash\.json/);
  assert.match(files, /000004-write_file\.json/);
});
