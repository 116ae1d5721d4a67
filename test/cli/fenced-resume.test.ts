// A run fetched from a remote goes on fenced against it. Machine A runs with `--push origin` and is
// paused (SIGSTOP) in the model call that asks for a deploy command; machine B does what
// docs/machines.md says (`git clone`, `savepoint resume`) and deploys; then A wakes (SIGCONT). B's
// resume pushes to origin as `--push origin` would, its command's start first, so A's push of the
// same step is rejected and A stops (EPUSHREJECTED) having deployed nothing: the deploy, a line
// appended to a file outside both clones, happened exactly once. With `--no-push` on B, nothing
// fences A, and it deploys a second time: what the docs say of opting out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertNoStack, assertStepModes, fakeEnv, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TASK = 'release v2 and deploy it';

// A bare `origin` with one commit on main, a way to clone it (a "machine"), and the deploy log
// beside it: outside both clones, so only the command writes it.
async function origin(): Promise<{ url: string; deploys: string; clone(name: string): Promise<string> }> {
  const dir = scratch.dir('savepoint-fenced-');
  const url = join(dir, 'origin.git');
  await gitOut(dir, ['init', '-q', '--bare', '-b', 'main', url]);
  const seed = join(dir, 'seed');
  await gitOut(dir, ['clone', '-q', url, seed]);
  writeFileSync(join(seed, 'README.md'), '# service\n');
  await gitOut(seed, ['add', '-A']);
  await gitOut(seed, ['commit', '-q', '-m', 'the service']);
  await gitOut(seed, ['push', '-q', 'origin', 'main']);
  return {
    url,
    deploys: join(dir, 'deploys.log'),
    clone: async (name) => {
      const root = join(dir, name);
      await gitOut(dir, ['clone', '-q', url, root]);
      return root;
    },
  };
}

const turns = (deploys: string): ScriptTurn[] => [
  { text: 'Writing the release note.', tools: [{ name: 'write_file', input: { path: 'RELEASE.md', content: 'v2\n' } }] },
  { text: 'Deploying.', tools: [{ name: 'run_bash', input: { command: `echo deployed >> '${deploys}'` } }] },
  { text: 'Deployed v2.' },
];

const deployCount = (deploys: string) => (existsSync(deploys) ? readFileSync(deploys, 'utf8').split('\n').filter(Boolean).length : 0);
const originFiles = (url: string): string[] => spawnSync('git', ['--git-dir', url, 'ls-tree', '-r', '--name-only', 'agent-journal'], { encoding: 'utf8' }).stdout.split('\n');
const tip = (gitDir: string) => spawnSync('git', ['--git-dir', gitDir, 'rev-parse', '--verify', '-q', 'agent-journal'], { encoding: 'utf8' }).stdout.trim();

// Machine A, paused in the model call whose answer is the deploy command, once origin has every step
// before it. The call's answer is held until `wake`, which also lets A go on (SIGCONT).
async function pausedBeforeDeploy(remote: Awaited<ReturnType<typeof origin>>) {
  let release: () => void = () => {};
  const answer = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const fake = await scratch.fake(turns(remote.deploys), undefined, {
    gate: (index) => {
      if (index !== 1 || holding) return undefined; // only A's first ask for the deploy is held
      holding = true;
      return answer;
    },
  });
  scratch.defer(release);
  const rootA = await remote.clone('machine-a');
  const a = startCli(['run', '--yes', '--no-sandbox', '--push', 'origin', TASK], { cwd: rootA, env: fakeEnv(fake) });
  scratch.defer(() => a.kill());
  await waitUntil(() => holding, "machine A asking the model for the deploy", { child: a });
  await waitUntil(() => originFiles(remote.url).some((path) => path.endsWith('000002-write_file.json')), "origin having A's steps before the deploy", { child: a });
  process.kill(a.pid, 'SIGSTOP');
  scratch.defer(() => {
    try {
      process.kill(a.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  });
  const wake = () => {
    release();
    process.kill(a.pid, 'SIGCONT');
    return a.result;
  };
  return { fake, a, wake };
}

describe('a run resumed from a remote is fenced against it', { concurrency: true }, () => {
  test('B resumes as the docs say and deploys; A, woken, finds its push rejected and stops: the deploy happened once', async () => {
    const remote = await origin();
    const { fake, wake } = await pausedBeforeDeploy(remote);

    const rootB = await remote.clone('machine-b');
    const b = await runCli(['resume', '--yes', '--no-sandbox'], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.match(b.stdout, /Fenced against origin: this run is in origin's journal, so it pushes there/);
    assert.match(b.stdout, /Deployed v2\./);
    assert.equal(deployCount(remote.deploys), 1, 'B deployed');
    assert.equal(tip(remote.url), tip(join(rootB, '.git')), "origin has all of B's journal");

    const woken = await wake();
    assert.equal(woken.code, 1, `A stops:\n${woken.stdout}\n${woken.stderr}`);
    assert.match(woken.stderr, /savepoint: Pushing the journal to origin was rejected: another machine moved run \S+ on/);
    assertNoStack(woken.stderr);
    assert.doesNotMatch(woken.stdout, /#4 .*run_bash/, 'A never started the command');
    assert.equal(deployCount(remote.deploys), 1, 'the deploy happened exactly once');
    assert.equal(tip(remote.url), tip(join(rootB, '.git')), "origin keeps B's journal");
  });

  test('with --no-push on B nothing fences A: woken, it deploys a second time (what opting out means)', async () => {
    const remote = await origin();
    const { fake, wake } = await pausedBeforeDeploy(remote);
    const pushedByA = tip(remote.url);

    const rootB = await remote.clone('machine-b');
    const b = await runCli(['resume', '--yes', '--no-sandbox', '--no-push'], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.doesNotMatch(b.stdout, /Fenced against/);
    assert.equal(deployCount(remote.deploys), 1);
    assert.equal(tip(remote.url), pushedByA, 'B pushed nothing');

    const woken = await wake();
    assert.equal(woken.code, 0, `${woken.stdout}\n${woken.stderr}`);
    assert.equal(deployCount(remote.deploys), 2, 'unfenced, the same step deployed on both machines');
  });
});

describe('a fetched run resumed fenced by default', () => {
  test('fetches the remote first: a clone made before the other machine went on replays its newer steps instead of being stopped by them', async () => {
    const remote = await origin();
    const script = join(scratch.dir('savepoint-script-'), 'deploy.json');
    writeFileSync(script, JSON.stringify({ turns: turns(remote.deploys) }));
    const rootA = await remote.clone('machine-a');
    const first = await runCli(['run', '--yes', '--no-sandbox', '--max-turns', '1', '--model', `script:${script}`, TASK], { cwd: rootA, env: {} });
    assert.equal(first.code, 3, `${first.stdout}\n${first.stderr}`);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);
    const rootB = await remote.clone('machine-b'); // origin's journal as it is now: steps #1-#2
    // A goes on (fenced against origin: it pushed the run) and deploys; origin has it, B's clone does not.
    const second = await runCli(['resume', '--yes', '--no-sandbox', '--max-turns', '2'], { cwd: rootA, env: {} });
    assert.equal(second.code, 3, `${second.stdout}\n${second.stderr}`);
    assert.equal(deployCount(remote.deploys), 1);
    assert.ok(originFiles(remote.url).some((path) => path.endsWith('000004-run_bash.json')), 'origin has the deploy');

    const b = await runCli(['resume', '--yes', '--no-sandbox'], { cwd: rootB, env: {} });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.match(b.stdout, /Fenced against origin/);
    assertStepModes(b.stdout, 4, 'B after fetching origin first');
    assert.match(b.stdout, /Deployed v2\./);
    assert.equal(deployCount(remote.deploys), 1, 'the deploy ran once, on A');
    assert.equal(tip(remote.url), tip(join(rootB, '.git')), "origin has B's journal");
  });
});

describe('a fetched run whose remote takes no pushes', () => {
  test('stops before its first command, saying how to opt out; with --no-push it goes on and the remote is left as it was', async () => {
    const remote = await origin();
    const script = join(scratch.dir('savepoint-script-'), 'deploy.json');
    writeFileSync(script, JSON.stringify({ turns: turns(remote.deploys) }));
    const rootA = await remote.clone('machine-a');
    const a = await runCli(['run', '--yes', '--no-sandbox', '--max-turns', '1', '--model', `script:${script}`, TASK], { cwd: rootA, env: {} });
    assert.equal(a.code, 3, `${a.stdout}\n${a.stderr}`);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);
    // From now on origin refuses every push (as a read-only mirror would).
    writeFileSync(join(remote.url, 'hooks', 'pre-receive'), '#!/bin/sh\necho "this mirror is read-only" >&2\nexit 1\n', { mode: 0o755 });
    const pushedByA = tip(remote.url);

    const rootB = await remote.clone('machine-b');
    const refused = await runCli(['resume', '--yes', '--no-sandbox', '--json'], { cwd: rootB, env: {} });
    assert.equal(refused.code, 1, `${refused.stdout}\n${refused.stderr}`);
    const events = refused.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; remote?: string; code?: string });
    assert.deepEqual(events.slice(0, 2).map((e) => e.type), ['run-started', 'fenced'], 'said right after the run is opened');
    assert.equal(events[1]!.remote, 'origin');
    assert.equal(events.at(-1)?.code, 'EPUSHFAILED');
    assert.match(refused.stderr, /savepoint: Pushing the journal to origin failed: .*read-only.*--no-push goes on without the fence/s);
    assertNoStack(refused.stderr);
    assert.equal(deployCount(remote.deploys), 0, 'nothing deployed while the fence could not be made');

    const unfenced = await runCli(['resume', '--yes', '--no-sandbox', '--no-push'], { cwd: rootB, env: {} });
    assert.equal(unfenced.code, 0, `${unfenced.stdout}\n${unfenced.stderr}`);
    assert.doesNotMatch(unfenced.stdout, /Fenced against/);
    assert.equal(deployCount(remote.deploys), 1);
    assert.equal(tip(remote.url), pushedByA, 'origin is as A left it');
  });
});
