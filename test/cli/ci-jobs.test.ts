// `--push <remote>` fetches that remote's journal before the run is looked for, also in a shallow,
// single-branch clone, as a CI job makes (`git clone --depth 1`). Job 1 runs a command, has it on
// origin, and is killed in its next model call; job 2, a fresh shallow clone running the identical
// command, continues the same run: the finished steps replay, the command does not run again.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertStepModes, fakeEnv, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TASK = 'build and publish the docs';

test('a killed job and the next job (fresh shallow clones running the identical command) continue one run, no finished step run again', async () => {
  const dir = scratch.dir('savepoint-ci-');
  const url = join(dir, 'origin.git');
  await gitOut(dir, ['init', '-q', '--bare', '-b', 'main', url]);
  const seed = join(dir, 'seed');
  await gitOut(dir, ['clone', '-q', url, seed]);
  for (const n of [1, 2, 3]) {
    writeFileSync(join(seed, 'README.md'), `# docs, version ${n}\n`);
    await gitOut(seed, ['add', '-A']);
    await gitOut(seed, ['commit', '-q', '-m', `version ${n}`]);
  }
  await gitOut(seed, ['push', '-q', 'origin', 'main']);
  const published = join(dir, 'published.log');
  const turns: ScriptTurn[] = [
    { text: 'Publishing.', tools: [{ name: 'run_bash', input: { command: `echo published >> '${published}'` } }] },
    { text: 'Noting it.', tools: [{ name: 'write_file', input: { path: 'PUBLISHED.md', content: 'yes\n' } }] },
    { text: 'Published.' },
  ];
  const hold = new Set([1]);
  const fake = await scratch.fake(turns, hold);
  const job = async (name: string) => {
    const root = join(dir, name);
    await gitOut(dir, ['clone', '-q', '--depth', '1', `file://${url}`, root]);
    assert.equal((await gitOut(root, ['rev-parse', '--is-shallow-repository'])), 'true');
    return root;
  };
  const args = ['run', '--yes', '--no-sandbox', '--push', 'origin', TASK];
  const originHas = (suffix: string) => spawnSync('git', ['--git-dir', url, 'ls-tree', '-r', '--name-only', 'agent-journal'], { encoding: 'utf8' }).stdout.split('\n').some((p) => p.endsWith(suffix));

  const first = startCli(args, { cwd: await job('job-1'), env: fakeEnv(fake) });
  scratch.defer(() => first.kill());
  await waitUntil(() => fake.requests.length >= 2 && originHas('000002-run_bash.json'), 'job 1 in its second model call, its command on origin', { child: first });
  first.kill();
  assert.equal((await first.result).signal, 'SIGKILL');
  assert.equal(readFileSync(published, 'utf8'), 'published\n');

  hold.clear();
  const calls = fake.requests.length;
  const second = await runCli(args, { cwd: await job('job-2'), env: fakeEnv(fake) });
  assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
  assertStepModes(second.stdout, 2, 'job 2');
  assert.match(second.stdout, /Published\./);
  assert.equal(readFileSync(published, 'utf8'), 'published\n', 'the command ran once, in job 1');
  assert.equal(fake.requests.length, calls + 2, 'job 2 asks only for the turns job 1 never finished');
  assert.ok(existsSync(join(dir, 'job-2', 'PUBLISHED.md')));
  assert.ok(originHas('000005-model.json'), "origin has job 2's steps");
});
