// Forking a run (src/valve/fork.ts), in this process on a real repository's journal: the fork holds
// the finished steps before its fork point, copied as inherited (attempt 0), its lineage, its
// parent's task and config, totals of what it kept, and the checkpoint it had there (the start's
// when no kept step made one); the step in flight at the fork point is not kept; opened, the fork
// replays what it holds and goes live at the fork point; the parent is untouched; a bad fork is
// refused with a usage error (or an unknown run's) and writes nothing.
// The command (`savepoint fork`, its messages and flags) is tested in test/cli/fork.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UnknownRunError, UsageError } from '../../src/errors/index.js';
import type { JournalEntry, RunConfig } from '../../src/journal/entry.js';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { forkRun } from '../../src/valve/fork.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
let store: JournalStore;
// The tree of the first commit (the run's start) and one a step of the run made.
let startTree: string;
let stepTree: string;
const CONFIG: RunConfig = { model: 'claude-test', system: 'You are terse.', tools: [], maxTokens: 1000, compaction: { enabled: false, at: 0.8, contextWindow: 200_000 } };

before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'one\n' }, commit: true });
  startTree = await repo.git('rev-parse', 'HEAD^{tree}');
  repo.write('a.txt', 'ONE\n');
  await repo.git('add', '-A');
  stepTree = await repo.git('write-tree');
  store = await JournalStore.open(repo.root);
  // Run "count": a model call (with usage), a read, an edit that checkpoints, another model call,
  // and a command left in flight (its intent recorded, its function never returned).
  const journal = await openRunJournal(store, { run: 'count', task: 'count to four', model: 'claude-test', config: CONFIG, startCheckpoint: startTree });
  await journal.step('model', { turn: 1 }, () => ({ text: 'reading' }), { usage: () => ({ inputTokens: 100, outputTokens: 10 }) });
  await journal.step('read_file', { path: 'a.txt' }, () => 'one');
  await journal.step('edit_file', { path: 'a.txt' }, () => 'edited', { intent: true, checkpoint: () => ({ tree: stepTree }) });
  await journal.step('model', { turn: 2 }, () => ({ text: 'running' }), { usage: () => ({ inputTokens: 200, outputTokens: 20 }) });
  await new Promise<void>((entered) => void journal.step('run_bash', { command: 'make' }, () => (entered(), new Promise<never>(() => {})), { intent: true }));
  journal.close();
});
after(async () => {
  await repo.remove();
});

const tip = () => repo.git('rev-parse', 'agent-journal');
const shape = (entries: JournalEntry[]) => entries.map((e) => `${e.step} ${e.kind} ${e.phase} attempt ${e.attempt}`);

describe('forkRun', () => {
  it('makes a run of the finished steps before the fork point, inherited, with its lineage, config, totals and checkpoint, in one commit', async () => {
    const parentBefore = await readRunEntries(store, 'count');
    const before = await tip();
    const fork = await forkRun(store, 'count', 4, 'count-a');
    assert.equal(fork.steps, 3);
    assert.equal(fork.checkpoint, stepTree, "the edit's checkpoint, the last one before the fork point");

    const record = (await readRunRecord(store, 'count-a'))!;
    assert.deepEqual(record.lineage, { forkedFrom: 'count', atStep: 4 });
    assert.equal(record.status, 'running');
    assert.equal(record.task, 'count to four');
    assert.equal(record.model, 'claude-test');
    assert.deepEqual(record.config, CONFIG, 'the fork sends what its parent sent');
    assert.deepEqual(record.attempts, []);
    assert.equal(record.startCheckpoint, stepTree);
    assert.equal(record.totals?.modelCalls, 1, 'the second model call is after the fork point');
    assert.equal(record.totals?.tokens.input, 100);
    assert.equal(record.totals?.lastStep, 3);
    assert.equal(record.totals?.inFlight, false);

    const entries = await readRunEntries(store, 'count-a');
    assert.deepEqual(shape(entries), ['1 model result attempt 0', '2 read_file result attempt 0', '3 edit_file intent attempt 0', '3 edit_file result attempt 0']);
    assert.ok(entries.every((e) => e.run === 'count-a'));
    const parent = new Map(parentBefore.map((e) => [`${e.step} ${e.phase}`, e]));
    for (const entry of entries) {
      const { run: _run, attempt: _attempt, ...copied } = entry;
      const { run: _from, attempt: _was, ...original } = parent.get(`${entry.step} ${entry.phase}`)!;
      assert.deepEqual(copied, original, `step ${entry.step} ${entry.phase} is copied as it was`);
    }
    assert.equal((await store.treeAt('runs/count-a'))?.get('worktree')?.oid, stepTree, 'the fork holds its checkpoint');

    assert.equal(await repo.git('rev-parse', 'agent-journal~1'), before, 'one commit');
    assert.equal(await repo.git('log', '-1', '--format=%s', 'agent-journal'), 'count-a forked from count at #4 (3 steps kept)');
    assert.deepEqual(await readRunEntries(store, 'count'), parentBefore, 'the parent is untouched');
  });

  it('keeps no step in flight at the fork point, and before any checkpoint starts from the run start', async () => {
    const last = await forkRun(store, 'count', 6, 'count-end');
    assert.equal(last.steps, 4, 'the command in flight at step 5 is the parent run\'s business');
    assert.deepEqual(shape(await readRunEntries(store, 'count-end')).at(-1), '4 model result attempt 0');
    assert.equal((await readRunRecord(store, 'count-end'))!.totals?.modelCalls, 2);

    const early = await forkRun(store, 'count', 2, 'count-early');
    assert.equal(early.steps, 1);
    assert.equal(early.checkpoint, startTree, 'no kept step checkpointed: the run start');
    assert.equal((await store.treeAt('runs/count-early'))?.get('worktree')?.oid, startTree);

    const first = await forkRun(store, 'count', 1, 'count-none');
    assert.equal(first.steps, 0);
    assert.deepEqual(await readRunEntries(store, 'count-none'), []);
  });

  it('opened, the fork replays what it holds without running it and goes live at the fork point', async () => {
    await forkRun(store, 'count', 3, 'count-b');
    const ran: string[] = [];
    const journal = await openRunJournal(store, { run: 'count-b', task: 'count to four', model: 'claude-test', config: CONFIG });
    try {
      assert.deepEqual(await journal.step('model', { turn: 1 }, () => (ran.push('model 1'), { text: 'other' })), { text: 'reading' });
      assert.equal(await journal.step('read_file', { path: 'a.txt' }, () => (ran.push('read'), 'other')), 'one');
      assert.equal(await journal.step('write_file', { path: 'b.txt' }, () => (ran.push('write'), 'written'), { intent: true }), 'written');
    } finally {
      journal.close();
    }
    assert.deepEqual(ran, ['write'], 'only the step at the fork point ran');
    assert.deepEqual(shape(await readRunEntries(store, 'count-b')).slice(2), ['3 write_file intent attempt 1', '3 write_file result attempt 1']);
  });

  it('refuses an unknown run, a bad or taken id and a step outside the run, writing nothing', async () => {
    const before = await tip();
    await assert.rejects(forkRun(store, 'nosuch', 2, 'x'), UnknownRunError);
    const usage = async (at: number, id: string, message: RegExp) => assert.rejects(forkRun(store, 'count', at, id), (error: unknown) => error instanceof UsageError && message.test(error.message));
    await usage(2, 'bad id!', /"bad id!" is not a valid run id/);
    await usage(2, 'count', /Run count already exists/);
    for (const at of [0, 7, 2.5]) await usage(at, 'count-x', new RegExp(`--at must be a step of run count from 1 to 6 .*not ${at}\\.`));
    assert.equal(await tip(), before);
    assert.equal(await readRunRecord(store, 'count-x'), undefined);
  });
});
