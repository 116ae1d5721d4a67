// How `savepoint run` and `savepoint resume` pick and drive a run: the identical command finds its
// run (and a finished one replays with no key and no request), --fresh and --run choose the id,
// resume finds the most recent unfinished run, --max-steps stops and a later run goes on by
// replay, and with no terminal and no --yes a live command fails the run before it runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import {
  assertNoStack,
  assertOneParagraph,
  assertStepModes,
  assertToolPairing,
  assistantMessages,
  fakeEnv,
  gitOut,
  journalJson,
  runCli,
  runIds,
} from '../helpers/cli.js';

const scratch = useScratch();

async function setup(turns: ScriptTurn[]): Promise<{ repo: TempRepo; fake: FakeAnthropic }> {
  const repo = await scratch.repo({ 'README.md': '# options\n' });
  const fake = await scratch.fake(turns);
  return { repo, fake };
}

// One command with a visible side effect, then a final answer: three steps.
const COUNTING: ScriptTurn[] = [
  { text: 'Leaving a mark.', tools: [{ name: 'run_bash', input: { command: 'echo ran >> ran.txt' } }] },
  { text: 'All finished.' },
];

// A read, then a final answer: three steps that change no file.
const READING: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'Read it.' },
];

// Three turns of one tool each, then the answer: seven steps.
const SEVEN_STEPS: ScriptTurn[] = [
  { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] },
  { tools: [{ name: 'run_bash', input: { command: 'echo b >> b.txt' } }] },
  { tools: [{ name: 'read_file', input: { path: 'a.txt' } }] },
  { text: 'Three files touched.' },
];

describe('savepoint run and resume', { concurrency: true }, () => {
  test('a new run with no API key and no script model stops with a message about ANTHROPIC_API_KEY and savepoint demo', async () => {
    const { repo, fake } = await setup(COUNTING);
    const run = await runCli(['run', '--yes', 'leave a mark'], { cwd: repo.root, env: { ANTHROPIC_BASE_URL: fake.url } });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /ANTHROPIC_API_KEY/);
    assert.match(run.stderr, /savepoint demo/);
    assertNoStack(run.stderr);
    assert.equal(fake.requests.length, 0);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false);
  });

  test('with no terminal and no --yes a live command fails the run with a message about --yes, and nothing runs', async () => {
    const { repo, fake } = await setup(COUNTING);
    const run = await runCli(['run', 'leave a mark'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /needs approval/);
    assert.match(run.stderr, /--yes/);
    assertOneParagraph(run.stderr);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false, 'the command did not run');

    // Approved this time: the model call replays and the command goes live.
    const approved = await runCli(['run', '--yes', 'leave a mark'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(approved.code, 0, approved.stderr);
    assertStepModes(approved.stdout, 1);
    assert.equal(repo.read('ran.txt'), 'ran\n');
    assert.deepEqual(fake.requests.map(assistantMessages), [0, 1]);
  });

  test('a finished run run again replays to its final answer with no request, no command and no API key; --fresh starts a new run id for the same task and --run uses the given id', async () => {
    const { repo, fake } = await setup(COUNTING);
    const task = 'leave a mark';
    const first = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    const [id] = await runIds(repo.root);
    assert.match(first.stdout, new RegExp(`run ${id}\\b`));
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);

    // No key at all, the fake still listening where the SDK would go, and no --yes: replayed steps
    // need neither a model nor an approval.
    const replayed = await runCli(['run', task], { cwd: repo.root, env: { ANTHROPIC_BASE_URL: fake.url } });
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(fake.requests.length, 2, 'no request during the replay');
    assert.equal(repo.read('ran.txt'), 'ran\n', 'the command did not run again');
    assertStepModes(replayed.stdout, 3);
    assert.match(replayed.stdout, /Final answer\nAll finished\./);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'replaying a finished run writes nothing');

    const fresh = await runCli(['run', '--yes', '--fresh', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(fresh.code, 0, fresh.stderr);
    assertStepModes(fresh.stdout, 0, 'a fresh run goes live from step 1');
    assert.match(fresh.stdout, new RegExp(`run ${id}-2\\b`));
    assert.deepEqual(await runIds(repo.root), [id, `${id}-2`].sort());

    const named = await runCli(['run', '--yes', '--run', 'my-run', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(named.code, 0, named.stderr);
    assert.match(named.stdout, /run my-run\b/);
    assert.deepEqual(await runIds(repo.root), [id, `${id}-2`, 'my-run'].sort());
    assert.equal((await journalJson<{ task: string }>(repo.root, 'runs/my-run/run.json')).task, task);
    assert.equal(repo.read('ran.txt'), 'ran\nran\nran\n', 'three runs, each ran its command once');

    // The identical command with --run finds that run again.
    const again = await runCli(['run', '--yes', '--run', 'my-run', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 3);
    assert.equal(fake.requests.length, 6);
  });

  test('--max-steps stops the run with exit 3 and a later run with a higher limit continues by replay', async () => {
    const { repo, fake } = await setup(SEVEN_STEPS);
    const task = 'touch three files';
    const three = await runCli(['run', '--yes', '--max-steps', '3', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(three.code, 3, three.stderr);
    assertStepModes(three.stdout, 0);
    assert.equal(assertStepModes(three.stdout, 0).length, 3, 'three steps, not more');
    assert.match(three.stdout, /--max-steps/);
    assert.equal(existsSync(join(repo.root, 'b.txt')), false, 'step 4 (the command) did not run');

    const five = await runCli(['run', '--yes', '--max-steps', '5', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(five.code, 3, five.stderr);
    assert.equal(assertStepModes(five.stdout, 3).length, 5);

    const all = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(all.code, 0, all.stderr);
    assert.equal(assertStepModes(all.stdout, 5).length, 7);
    assert.match(all.stdout, /Three files touched\./);
    assert.equal(repo.read('b.txt'), 'b\n');
    assert.deepEqual(fake.requests.map(assistantMessages), [0, 1, 2, 3], 'each turn asked once');
    assertToolPairing(fake.requests);
  });

  test('resume continues the most recent unfinished run, then the one before it', async () => {
    // Read-only steps: two runs changing the same files would (rightly) trip the drift check.
    const { repo, fake } = await setup(READING);
    const older = await runCli(['run', '--yes', '--max-steps', '1', 'the older task'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(older.code, 3, older.stderr);
    const newer = await runCli(['run', '--yes', '--max-steps', '1', 'the newer task'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(newer.code, 3, newer.stderr);
    const [olderId, newerId] = [/run (\S+)/.exec(older.stdout)![1], /run (\S+)/.exec(newer.stdout)![1]];

    const first = await runCli(['resume', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`run ${newerId}\\b`));
    assertStepModes(first.stdout, 1);

    const second = await runCli(['resume', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`run ${olderId}\\b`));
    assertStepModes(second.stdout, 1);

    const none = await runCli(['resume', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no unfinished run/);
    assertNoStack(none.stderr);

    const byId = await runCli(['resume', olderId!], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(byId.code, 0, byId.stderr);
    assertStepModes(byId.stdout, 3, 'resuming a finished run by id replays it');
    // Each run asked for turn 1 before its limit, and for turn 2 when resumed.
    assert.deepEqual(fake.requests.map(assistantMessages), [0, 0, 1, 1]);
  });
});
