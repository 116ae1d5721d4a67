// `savepoint fork <run> --at <step>`, end to end: the new run holds the old run's steps before
// <step> and the checkpoint there, with its lineage in run.json and in `savepoint runs`; resuming it
// replays those steps (no model call) and goes live at <step>, on the files as they were there. It is
// also the way on after a divergence error. The old run is never changed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic, MessagesBody } from '../helpers/fake-anthropic.js';
import { assertFsckClean, gitOut, journalFile, journalFiles, journalSubjects, rewriteJournalFiles } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import { assertNoStack, assertStepModes, assistantMessages, fakeEnv, heldTurns, runCli, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();
const fakeWith = (turns: ScriptTurn[] | ((body: MessagesBody) => ScriptTurn)): Promise<FakeAnthropic> => scratch.fake(turns);
const repoWith = (files: Record<string, string>): Promise<TempRepo> => scratch.repo(files);

const TASK = 'count to three in a.txt';
// #1 model, #2 write_file, #3 model, #4 run_bash, #5 model, #6 edit_file, #7 model (final).
const TURNS: ScriptTurn[] = [
  { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
  { tools: [{ name: 'run_bash', input: { command: 'echo two >> a.txt' } }] },
  { tools: [{ name: 'edit_file', input: { path: 'a.txt', old_string: 'one', new_string: 'ONE' } }] },
  { text: 'Counted, shouting the first.' },
];
// The fork's own path from turn 2 on: another edit, another answer.
const OTHER_PATH: ScriptTurn[] = [
  TURNS[0]!,
  TURNS[1]!,
  { tools: [{ name: 'edit_file', input: { path: 'a.txt', old_string: 'one', new_string: 'uno' } }] },
  { text: 'Counted, in Spanish first.' },
];

// Every file of a run on the branch, path -> content.
async function runFiles(root: string, run: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const path of await journalFiles(root, `runs/${run}`)) files.set(path, await journalFile(root, path));
  return files;
}

describe('fork', { concurrency: true }, () => {
  test('at a step, then run: the early steps replay, the rest is live, the lineage shows, the old run is untouched; bad forks are refused clearly', async () => {
    const repo = await repoWith({ 'README.md': '# count\n' });
    const original = await fakeWith(TURNS);
    const done = await runCli(['run', '--yes', '--run', 'count', TASK], { cwd: repo.root, env: fakeEnv(original) });
    assert.equal(done.code, 0, done.stderr);
    assert.equal(repo.read('a.txt'), 'ONE\ntwo\n');
    const before = await runFiles(repo.root, 'count');

    const fork = await runCli(['fork', 'count', '--at', '5', '--run', 'count-es'], { cwd: repo.root, env: {} });
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, /Forked count at step 5 as count-es: 4 finished step\(s\) kept, with the working tree as it was there\./);
    assert.match(fork.stdout, /savepoint resume count-es/);
    assert.equal(repo.read('a.txt'), 'ONE\ntwo\n', 'forking touches no file');

    // What the fork holds: run.json with its lineage, steps 1-4 copied, the checkpoint of step 4.
    const record = JSON.parse(await journalFile(repo.root, 'runs/count-es/run.json')) as Record<string, unknown>;
    assert.deepEqual(record.lineage, { forkedFrom: 'count', atStep: 5 });
    assert.equal(record.task, TASK);
    assert.equal(record.status, 'running');
    const copied = (await journalFiles(repo.root, 'runs/count-es/steps')).map((p) => p.split('/').pop());
    assert.deepEqual(copied, ['000001-model.json', '000002-write_file.json', '000003-model.json', '000004-run_bash.intent.json', '000004-run_bash.json']);
    for (const name of copied) {
      const entry = JSON.parse(await journalFile(repo.root, `runs/count-es/steps/000/${name}`)) as Record<string, unknown>;
      const parent = JSON.parse(await journalFile(repo.root, `runs/count/steps/000/${name}`)) as Record<string, unknown>;
      assert.deepEqual({ ...entry, run: 'count', attempt: parent.attempt }, parent, `${name} is the parent's entry, with its run and attempt 0`);
      assert.equal(entry.attempt, 0);
    }
    const step4 = JSON.parse(await journalFile(repo.root, 'runs/count/steps/000/000004-run_bash.json')) as { checkpoint: string };
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal:runs/count-es/worktree']), step4.checkpoint);
    assert.equal(await journalFile(repo.root, 'runs/count-es/worktree/a.txt'), 'one\ntwo');
    assert.match((await journalSubjects(repo.root))[0]!, /^count-es forked from count at #5 \(4 steps kept\)$/);

    const runs = await runCli(['runs'], { cwd: repo.root, env: {} });
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, /count-es/);
    assert.match(runs.stdout, /forked from count/);

    // Running it: on the files as they were at the fork point (--restore, as the fork says), steps
    // 1-4 replay with no model call, and from step 5 on the fork takes its own path.
    const other = await fakeWith(OTHER_PATH);
    const resumed = await runCli(['resume', '--yes', '--restore', 'count-es'], { cwd: repo.root, env: fakeEnv(other) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertStepModes(resumed.stdout, 4, 'the fork');
    assert.deepEqual(other.requests.map(assistantMessages), [2, 3], 'the model is asked only from the fork point on');
    assert.match(resumed.stdout, /Counted, in Spanish first\./);
    assert.equal(repo.read('a.txt'), 'uno\ntwo\n');
    const finished = JSON.parse(await journalFile(repo.root, 'runs/count-es/run.json')) as Record<string, unknown>;
    assert.equal(finished.status, 'finished');
    assert.deepEqual(finished.lineage, { forkedFrom: 'count', atStep: 5 });


    // Bad forks are refused clearly, and write nothing.
    const cases: Array<{ args: string[]; code: number; message: RegExp }> = [
      { args: ['fork', 'count', '--at', '9'], code: 2, message: /--at must be a step of run count from 1 to 8/ },
      { args: ['fork', 'count', '--at', '0'], code: 2, message: /--at needs a step number/ },
      { args: ['fork', 'count', '--at', 'two'], code: 2, message: /--at needs a step number/ },
      { args: ['fork', 'nosuch', '--at', '2'], code: 1, message: /There is no run "nosuch" in this repository.s journals/ },
      { args: ['fork', 'count', '--at', '2', '--run', 'count'], code: 2, message: /Run count already exists/ },
      { args: ['fork', 'count', '--at', '2', '--run', 'bad id!'], code: 2, message: /not a valid run id/ },
    ];
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    for (const { args, code, message } of cases) {
      const result = await runCli(args, { cwd: repo.root, env: {} });
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(' '));
      assertNoStack(result.stderr);
    }
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'a refused fork writes nothing');
    // Two forks at the same step get distinct default ids.
    assert.match((await runCli(['fork', 'count', '--at', '3'], { cwd: repo.root, env: {} })).stdout, /as count-fork-3:/);
    assert.match((await runCli(['fork', 'count', '--at', '3'], { cwd: repo.root, env: {} })).stdout, /as count-fork-3-2:/);

    assert.deepEqual(await runFiles(repo.root, 'count'), before, 'the old run is not changed by forking, by the fork or by refused forks');
    await assertFsckClean(repo.root);
  });

  test('the way on after a divergence: the replay stops at the changed step, the fork from there runs', async () => {
    const repo = await repoWith({ 'README.md': '# count\n' });
    const hold = new Set([2]);
    const fake = await fakeWith(heldTurns(TURNS, hold));
    const first = startCli(['run', '--yes', '--run', 'count', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: first });
    first.kill();
    await first.result;
    hold.clear();
    // Someone changes what the model answered at step 3 (a hand edit of the journal): on replay,
    // the loop now asks for a different command at step 4 than the one recorded there.
    const path = 'runs/count/steps/000/000003-model.json';
    const entry = JSON.parse(await journalFile(repo.root, path)) as { result: { content: Array<{ type: string; input?: { command?: string } }> } };
    entry.result.content.find((b) => b.type === 'tool_use')!.input!.command = 'echo deux >> a.txt';
    await rewriteJournalFiles(repo.root, { [path]: `${JSON.stringify(entry, null, 2)}\n` });

    const diverged = await runCli(['run', '--yes', '--run', 'count', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(diverged.code, 1, diverged.stdout);
    assert.match(diverged.stderr, /step 4/i);
    assert.match(diverged.stderr, /savepoint fork/);
    assertNoStack(diverged.stderr);

    const fork = await runCli(['fork', 'count', '--at', '4'], { cwd: repo.root, env: {} });
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, /as count-fork-4: 3 finished step\(s\) kept/);
    // The files moved on after step 2 (the parent's step 4 appended "two"): the fork goes on from
    // the parent's files at the fork point, put back with no question and no flag (this test once
    // needed --restore, which also restored files the parent never wrote), the parent's later version saved.
    assert.match(fork.stdout, /savepoint resume count-fork-4\n/);
    const requests = fake.requests.length;
    const resumed = await runCli(['resume', '--yes', 'count-fork-4'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout.replace(/\s+/g, ' '), /The fork goes on from its parent's files: put back the files the parent run wrote after the fork point, as they were after step 2 \(1 written, 0 deleted\)/);
    assert.match(resumed.stdout.replace(/\s+/g, ' '), /saved in refs\/savepoint\/saved\/count-fork-4\/1 \(a\.txt\)/);
    assert.equal(await gitOut(repo.root, ['show', 'refs/savepoint/saved/count-fork-4/1:a.txt']), 'one\ntwo');
    assertStepModes(resumed.stdout, 3, 'the fork after a divergence');
    assert.match(resumed.stdout, /#4 +LIVE \(running now\) +run_bash "echo deux >> a\.txt"/);
    assert.deepEqual(fake.requests.slice(requests).map(assistantMessages), [2, 3]);
    assert.equal(repo.read('a.txt'), 'ONE\ndeux\n');
  });
});
