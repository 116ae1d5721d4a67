// A run's snapshot in the valve (src/valve/snapshot.ts): the loop's state offered before a step is
// written with that step's entry, in the same commit, only when it is due; opened from it, the run
// reads the entries after it and none before (counted at the object store), starts at its step and
// hands the loop its state; and a snapshot whose fields are not what they must be is not one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { configDigest, parseSnapshot, SNAPSHOT_AFTER_COMPACTION, snapshotPath, type LoopState, type RunSnapshot } from '../../src/valve/snapshot.js';
import type { RunConfig } from '../../src/journal/entry.js';
import { gitOut } from '../helpers/git.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'hello\n' }, commit: true });
});
after(async () => {
  await repo.remove();
});

const CONFIG: RunConfig = { model: 'claude-test', system: 'be brief', tools: [], maxTokens: 1024, compaction: { enabled: true, at: 0.8, contextWindow: 200_000 } };

function state(steps: number): LoopState {
  return {
    turn: 3,
    model: 'claude-test',
    messages: [{ role: 'user', content: 'the task' }, { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }] }],
    tokens: 120,
    compactionsInARow: 0,
    settled: false,
    budget: { steps, turns: 1, cost: 0.25 },
    stopBlocks: 0,
    final: '',
    partial: '',
    continuations: 0,
    lastFollowUp: { message: 'go on', step: 1 },
  };
}

async function openRun(run: string, fromSnapshot: boolean, store?: JournalStore) {
  return openRunJournal(store ?? (await JournalStore.open(repo.root)), { run, task: 'the task', model: 'claude-test', config: CONFIG, fromSnapshot });
}

// `count` model steps, each `steps` before it offered as a snapshot just after a compaction.
async function record(run: string, count: number): Promise<void> {
  const journal = await openRun(run, false);
  try {
    for (let i = 1; i <= count; i++) {
      journal.offerSnapshot(() => state(i - 1), true);
      await journal.step('model', { turn: i }, () => ({ answer: i }));
    }
  } finally {
    journal.close();
  }
}

describe('snapshots in the valve', () => {
  it('is written with the step after it when due, and a run opened from it reads only the entries after it', async () => {
    const count = SNAPSHOT_AFTER_COMPACTION + 3;
    await record('snap', count);
    const snapshot = JSON.parse(await gitOut(repo.root, ['show', `agent-journal:${snapshotPath('snap')}`])) as RunSnapshot;
    assert.equal(snapshot.step, SNAPSHOT_AFTER_COMPACTION, 'offered at every step, taken once 50 steps went by (not before)');
    const subject = await gitOut(repo.root, ['log', '-1', '--format=%s', 'agent-journal', '--', snapshotPath('snap')]);
    assert.match(subject, new RegExp(`^snap #${SNAPSHOT_AFTER_COMPACTION + 1} `), 'in the commit of the step after it');
    assert.equal(snapshot.entry.oid, await gitOut(repo.root, ['rev-parse', `agent-journal:runs/snap/steps/000/0000${SNAPSHOT_AFTER_COMPACTION}-model.json`]));
    assert.equal(snapshot.config, configDigest(CONFIG));

    const store = await JournalStore.open(repo.root);
    const read: string[] = [];
    const objects = store.objects;
    const readObject = objects.read.bind(objects);
    objects.read = ((oid: string, ...rest: Parameters<typeof objects.read> extends [string, ...infer R] ? R : never) => (read.push(oid), readObject(oid, ...rest))) as typeof objects.read;
    const journal = await openRun('snap', true, store);
    try {
      assert.equal(journal.resumedFrom, SNAPSHOT_AFTER_COMPACTION);
      assert.deepEqual(journal.resumeState, snapshot.loop);
      assert.equal(journal.history.lastPosition, count);
      assert.equal(journal.history.finishedCount, count);
      assert.equal(journal.history.totals().files, count, 'the totals go on from the snapshot');
      const entryBlobs = await Promise.all(Array.from({ length: count }, (_, i) => gitOut(repo.root, ['rev-parse', `agent-journal:runs/snap/steps/000/${String(i + 1).padStart(6, '0')}-model.json`])));
      const entriesRead = entryBlobs.map((oid, i) => (read.includes(oid) ? i + 1 : 0)).filter(Boolean);
      assert.deepEqual(entriesRead, [count - 2, count - 1, count], 'only the entries after the snapshot were read');
      // The loop asks for the next step: it is the one after the snapshot, handed back.
      assert.deepEqual(await journal.step('model', { turn: SNAPSHOT_AFTER_COMPACTION + 1 }, () => assert.fail('replayed, not run')), { answer: SNAPSHOT_AFTER_COMPACTION + 1 });
    } finally {
      journal.close();
    }

    const whole = await openRun('snap', false);
    try {
      assert.equal(whole.resumedFrom, 0, 'not asked for: every entry is read');
      assert.equal(whole.resumeState, undefined);
    } finally {
      whole.close();
    }
  });

  it('is not one when any field is not what it must be', () => {
    const valid: RunSnapshot = {
      format: 'savepoint/snapshot@1',
      run: 'r',
      step: 4,
      entry: { kind: 'model', oid: 'a'.repeat(40) },
      config: 'b'.repeat(32),
      finished: 4,
      totals: { files: 4, lastStep: 4, lastFinished: true, modelCalls: 1, tokens: { input: 1, output: 2, cacheCreation: 0, cacheRead: 0 }, lastActivity: '2026-01-01T00:00:00.000Z', latest: 1, trail: [] },
      loop: state(4),
    };
    assert.deepEqual(parseSnapshot(JSON.stringify(valid), 'r'), valid);
    const broken: Array<[string, unknown]> = [
      ['another run', { ...valid, run: 's' }],
      ['another format', { ...valid, format: 'savepoint/snapshot@2' }],
      ['a step that is not a count', { ...valid, step: 4.5 }],
      ['fewer finished than its step', { ...valid, finished: 3 }],
      ['an entry id that is no object id', { ...valid, entry: { kind: 'model', oid: '--output=x' } }],
      ['an entry kind that is no kind', { ...valid, entry: { kind: '../x', oid: 'a'.repeat(40) } }],
      ['a config digest that is no digest', { ...valid, config: 42 }],
      ['totals of another step', { ...valid, totals: { ...valid.totals, lastStep: 3 } }],
      ['a checkpoint that is no tree id', { ...valid, totals: { ...valid.totals, trail: [{ tree: 'HEAD', person: false }] } }],
      ['a budget of another step', { ...valid, loop: { ...valid.loop, budget: { ...valid.loop.budget, steps: 3 } } }],
      ['a cost that is no amount', { ...valid, loop: { ...valid.loop, budget: { ...valid.loop.budget, cost: -1 } } }],
      ['no messages', { ...valid, loop: { ...valid.loop, messages: [] } }],
      ['a message of another role', { ...valid, loop: { ...valid.loop, messages: [{ role: 'system', content: 'obey' }] } }],
      ['a block without a type', { ...valid, loop: { ...valid.loop, messages: [{ role: 'assistant', content: [{ text: 'x' }] }] } }],
      ['a model name too long', { ...valid, loop: { ...valid.loop, model: 'm'.repeat(5000) } }],
      ['a follow-up after its step', { ...valid, loop: { ...valid.loop, lastFollowUp: { message: 'x', step: 5 } } }],
      ['a turn that is not a count', { ...valid, loop: { ...valid.loop, turn: 'seven' } }],
    ];
    for (const [what, value] of broken) assert.equal(parseSnapshot(JSON.stringify(value), 'r'), undefined, what);
    assert.equal(parseSnapshot('{"format": "savepoint/snap', 'r'), undefined, 'not JSON');
  });
});
