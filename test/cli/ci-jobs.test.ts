// The CI flow of docs/ci.md, run locally: a bare `origin`, and each job a fresh `--depth 1
// --single-branch` clone, HEAD detached as CI checks out, running the workflows' command
// (examples/github-actions/savepoint.yml, examples/gitlab-ci/.gitlab-ci.yml). `--push origin` fetches
// origin's journal before the run is looked for. Job 1 runs a command, has it on origin, and is killed
// with SIGKILL by `timeout -s KILL` in its next model call (a preempted runner); job 2 runs the identical
// command and continues the same run: the finished steps replay, the command does not run again, the
// model is asked only for what job 1 never finished. A later job with the `remote` setting instead of
// the flag fetches and pushes too. Job 2 fetches the journal shallow (its last commit); origin stays
// whole (fsck --strict) and a full clone of it logs the whole run. Two jobs at once on one task: one goes on, the
// other stops before its command, and the command runs once.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertNoStack, assertStepModes, fakeEnv, runCli, startCli, waitUntil, type CliResult } from '../helpers/cli.js';
import { assertFsckClean, commitCount, gitOut, runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { runIdForTask } from '../../src/journal/run-id.js';

const scratch = useScratch();
const TASK = 'build and publish the docs';
// The workflows' command, `"$TASK"` as its last word (checked against the files below). The test adds
// --no-sandbox: its command's side effect is a file outside the clone, which the sandbox keeps
// read-only, and that file is how the test counts the command's runs across jobs.
const WORKFLOW_COMMAND = ['run', '--yes', '--push', 'origin'];
const JOB = [...WORKFLOW_COMMAND, '--no-sandbox', TASK];

// A bare origin with three commits on main, the side-effect file beside it, and a way to make a job's clone.
async function origin(label: string) {
  const dir = scratch.dir(`savepoint-ci-${label}-`);
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
  // A CI checkout: shallow, one branch, HEAD detached (as actions/checkout leaves a pull request's).
  const job = async (name: string) => {
    const root = join(dir, name);
    await gitOut(dir, ['clone', '-q', '--depth', '1', '--single-branch', `file://${url}`, root]);
    await gitOut(root, ['checkout', '-q', '--detach']);
    assert.equal(await gitOut(root, ['rev-parse', '--is-shallow-repository']), 'true');
    assert.equal((await runGit(root, ['rev-parse', '--verify', '-q', 'refs/remotes/origin/agent-journal'])).code, 1, 'a single-branch clone has no journal of its own');
    return root;
  };
  const turns: ScriptTurn[] = [
    { text: 'Publishing.', tools: [{ name: 'run_bash', input: { command: `echo published >> '${published}'` } }] },
    { text: 'Noting it.', tools: [{ name: 'write_file', input: { path: 'PUBLISHED.md', content: 'yes\n' } }] },
    { text: 'Published.' },
  ];
  const originHas = (suffix: string) => spawnSync('git', ['--git-dir', url, 'ls-tree', '-r', '--name-only', 'agent-journal'], { encoding: 'utf8' }).stdout.split('\n').some((p) => p.endsWith(suffix));
  const publishedTimes = () => (existsSync(published) ? readFileSync(published, 'utf8').split('\n').filter(Boolean).length : 0);
  return { dir, url, job, turns, originHas, publishedTimes };
}

describe('CI jobs', { concurrency: true }, () => {
  test('a job killed by timeout -s KILL and the next job (a fresh shallow, single-branch, detached clone running the identical command) continue one run, no finished step run again', async () => {
    const ci = await origin('killed');
    const hold = new Set([1]);
    const fake = await scratch.fake(ci.turns, hold);

    // Job 1, under `timeout -s KILL`: SIGALRM is timeout's own expiry, so it SIGKILLs savepoint as a job's time limit would.
    const first = startCli(JOB, { cwd: await ci.job('job-1'), env: fakeEnv(fake), under: ['timeout', '-s', 'KILL', '600'] });
    scratch.defer(() => first.kill());
    await waitUntil(() => fake.requests.length >= 2 && ci.originHas('000002-run_bash.json'), 'job 1 in its second model call, its command on origin', { child: first });
    process.kill(first.pid, 'SIGALRM');
    const killed = await first.result;
    // With -s KILL, timeout sends it to its whole process group, itself included (its exit is then 137 in a shell).
    assert.equal(killed.signal, 'SIGKILL', `timeout killed the job: ${killed.code} ${killed.stderr}`);
    assertStepModes(killed.stdout, 0, 'job 1');
    assert.equal(ci.publishedTimes(), 1);

    hold.clear();
    const calls = fake.requests.length;
    const job2 = await ci.job('job-2');
    const second = await runCli(JOB, { cwd: job2, env: fakeEnv(fake) });
    assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
    assertStepModes(second.stdout, 2, 'job 2');
    assert.match(second.stdout, /Published\./);
    assert.equal(ci.publishedTimes(), 1, 'the command ran once, in job 1');
    assert.equal(fake.requests.length, calls + 2, 'job 2 asks only for the turns job 1 never finished');
    assert.equal(readFileSync(join(job2, 'PUBLISHED.md'), 'utf8'), 'yes\n');
    assert.ok(ci.originHas('000005-model.json'), "origin has job 2's steps");
    assert.equal(await gitOut(ci.url, ['rev-parse', 'agent-journal']), await gitOut(job2, ['rev-parse', 'agent-journal']), 'origin has the whole journal');
    // Job 2's clone is shallow, and so is the journal it fetched (its last commit, then job 2's own);
    // origin, which took job 2's pushes, is whole, and a full clone of it shows the whole run.
    assert.ok((await commitCount(job2)) < (await commitCount(ci.url)), "job 2 fetched the journal's last commit only");
    await assertFsckClean(ci.url, 'origin after pushes from a shallow journal');
    const full = join(ci.dir, 'full');
    await gitOut(ci.dir, ['clone', '-q', `file://${ci.url}`, full]);
    const log = await runCli(['log', runIdForTask(TASK)], { cwd: full, env: fakeEnv(fake) });
    assert.equal(log.code, 0, log.stderr);
    for (const n of [1, 2, 3, 4, 5]) assert.match(log.stdout, new RegExp(`#${n}\\b`), `a full clone's log shows step ${n}`);

    // Job 3 sets `remote` in the user's settings instead of --push: it fetches origin's journal too,
    // gives the run a follow-up (its five steps replay, one model call) and pushes the new steps.
    const config = join(ci.dir, 'config');
    mkdirSync(join(config, 'savepoint'), { recursive: true });
    writeFileSync(join(config, 'savepoint', 'settings.json'), JSON.stringify({ remote: 'origin' }));
    const run = runIdForTask(TASK);
    const third = await runCli(['continue', '--yes', '--no-sandbox', '--run', run, 'now say it is published'], { cwd: await ci.job('job-3'), env: fakeEnv(fake, { XDG_CONFIG_HOME: config }) });
    assert.equal(third.code, 0, `${third.stdout}\n${third.stderr}`);
    assertStepModes(third.stdout, 5, 'job 3, the remote setting');
    assert.equal(fake.requests.length, calls + 3, 'one model call, for the follow-up');
    assert.equal(ci.publishedTimes(), 1);
    assert.ok(ci.originHas('000007-model.json'), "origin has job 3's follow-up, pushed as the setting says");
  });

  test('two jobs at once on one task: one goes on, the other stops before its command with a clear message, and the command runs once', async () => {
    const ci = await origin('race');
    // Both jobs' first model calls are answered only once both have asked: each has looked for the run on origin and found none.
    let release: () => void = () => {};
    const both = new Promise<void>((resolve) => (release = resolve));
    const fake = await scratch.fake(ci.turns, undefined, { gate: (index) => (index === 0 ? both : undefined) });
    scratch.defer(release);
    const jobs = [startCli(JOB, { cwd: await ci.job('job-a'), env: fakeEnv(fake) }), startCli(JOB, { cwd: await ci.job('job-b'), env: fakeEnv(fake) })];
    for (const job of jobs) scratch.defer(() => job.kill());
    await waitUntil(() => fake.requests.length >= 2, 'both jobs asking the model');
    release();
    const results: CliResult[] = await Promise.all(jobs.map((job) => job.result));
    const [won, lost] = results[0]!.code === 0 ? [results[0]!, results[1]!] : [results[1]!, results[0]!];
    assert.equal(won.code, 0, `${won.stdout}\n${won.stderr}`);
    assert.match(won.stdout, /Published\./);
    assert.equal(lost.code, 1, `${lost.stdout}\n${lost.stderr}`);
    assert.match(lost.stderr, /savepoint: Pushing the journal to origin was rejected: another machine moved run \S+ on there/);
    assertNoStack(lost.stderr);
    assert.doesNotMatch(lost.stdout, /#2 .*run_bash/, 'the job that lost never started the command');
    assert.equal(ci.publishedTimes(), 1, 'the command ran once');
  });

  test("the workflow files run the command this test runs, with what it needs", () => {
    for (const file of ['examples/github-actions/savepoint.yml', 'examples/gitlab-ci/.gitlab-ci.yml']) {
      const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
      const lines = text.split('\n').map((line) => line.replace(/^\s*(?:-\s+)?(?:run:\s+)?/, '').trim());
      const commands = lines.filter((line) => /^savepoint run /.test(line));
      assert.deepEqual(commands, [`savepoint ${WORKFLOW_COMMAND.join(' ')} "$TASK"`], `${file} runs the tested command`);
      assert.match(text, /concurrency:|resource_group:/, `${file} keeps two jobs of one task from racing`);
    }
    const github = readFileSync(new URL('../../examples/github-actions/savepoint.yml', import.meta.url), 'utf8');
    assert.match(github, /contents: write/);
    assert.match(github, /ANTHROPIC_API_KEY: \$\{\{ secrets\.ANTHROPIC_API_KEY \}\}/);
  });
});
