// A change of model within a run (`continue --model`), through the real CLI against the fake
// Anthropic server: it is a journaled step of kind config, before the follow-up; later model calls
// go to the new model; the identical command replays it exactly and adds nothing; and after a
// kill -9 in the turn that follows it, the identical command finishes that turn on the new model
// without sending any finished request again.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertStepModes, assertToolPairing, fakeEnv, gitOut, journalPaths, runCli, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

const TURNS: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'The README is one line.' },
  { text: 'Reading again.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'Still one line.' },
];

const stepsOf = async (root: string, kind: string) => (await journalPaths(root)).filter((p) => p.endsWith(`-${kind}.json`));

describe('a change of model within a run', { concurrency: true }, () => {
  test('--model on continue records a config step before the follow-up, later calls use it, and a replay reproduces it exactly', async () => {
    const repo = await scratch.repo({ 'README.md': '# models\n' });
    const fake = await scratch.fake([...TURNS, { text: 'Read it a third time.' }]);
    const first = await runCli(['run', '--yes', '--model', 'claude-first', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);

    const next = await runCli(['continue', '--yes', '--model', 'claude-second', 'read it again'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stdout, /model claude-second/, 'the header names the model in use');
    const lines = assertStepModes(next.stdout, 3);
    assert.match(lines[3]!.text, /^config model claude-second/);
    assert.match(lines[4]!.text, /^user "read it again"/);
    assert.deepEqual(fake.requests.map((r) => r.model), ['claude-first', 'claude-first', 'claude-second', 'claude-second']);
    assertToolPairing(fake.requests);
    assert.match(await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']), / #4 config /);

    // A plain replay of the run (no --model) reproduces the change from the journal.
    const replay = await runCli(['run', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /Final answer\nStill one line\./);
    assert.equal(fake.requests.length, 4);

    // The identical command after the run answered is a new message (issue 35), on the model the
    // run uses already: no second config step, the eight steps replay, then the model answers.
    const again = await runCli(['continue', '--yes', '--model', 'claude-second', 'read it again'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 8);
    assert.equal(fake.requests.length, 5);
    assert.equal(fake.requests[4]!.model, 'claude-second');
    assert.equal((await stepsOf(repo.root, 'config')).length, 1);
    assert.equal((await stepsOf(repo.root, 'user')).length, 2);
  });

  test('killed (SIGKILL) in the turn after the change, the identical command finishes it on the new model, sending no finished request again', async () => {
    const repo = await scratch.repo({ 'README.md': '# models\n' });
    const hold = new Set([3]);
    const fake = await scratch.fake(TURNS, hold);
    assert.equal((await runCli(['run', '--yes', '--model', 'claude-first', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) })).code, 0);
    const live = startCli(['continue', '--yes', '--model', 'claude-second', 'read it again'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length === 4, 'the model call after the read', { child: live });
    live.kill();
    assert.equal((await live.result).signal, 'SIGKILL');

    hold.delete(3);
    const resumed = await runCli(['continue', '--yes', '--model', 'claude-second', 'read it again'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertNoStack(resumed.stderr);
    assertStepModes(resumed.stdout, 7);
    assert.deepEqual(fake.requests.map((r) => r.model), ['claude-first', 'claude-first', 'claude-second', 'claude-second', 'claude-second']);
    assert.equal(JSON.stringify(fake.requests[4]!.messages), JSON.stringify(fake.requests[3]!.messages), 'the unfinished request is asked again, exactly');
    assert.equal((await stepsOf(repo.root, 'config')).length, 1);
    assert.equal((await stepsOf(repo.root, 'user')).length, 1);
  });

  test('the same model as the run already uses is no change: no config step is recorded', async () => {
    const repo = await scratch.repo({ 'README.md': '# models\n' });
    const fake = await scratch.fake(TURNS);
    assert.equal((await runCli(['run', '--yes', '--model', 'claude-first', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) })).code, 0);
    const next = await runCli(['continue', '--yes', '--model', 'claude-first', 'read it again'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(next.code, 0, next.stderr);
    assert.equal((await stepsOf(repo.root, 'config')).length, 0);
  });
});
