// Steps that run at the same time (one answer's reads, a batch): where the journal may lack a step
// before a later one, and where it may not; what the valve does when a step of a batch throws; and
// a batch's appends, made at once by one process, all landing (on git; the rest on the in-memory store).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CorruptEntryError, UnfinishedBatchError } from '../../src/errors/index.js';
import { ENTRY_FORMAT, type JournalEntry } from '../../src/journal/entry.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { History } from '../../src/valve/history.js';
import { openJournal, openRunJournal } from '../../src/valve/open-journal.js';
import type { StepBatch } from '../../src/valve/step-types.js';
import { assertFsckClean } from '../helpers/git.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

function entry(step: number, kind: string, phase: 'intent' | 'result' = 'result', batch?: [number, number]): JournalEntry {
  return { format: ENTRY_FORMAT, run: 'r', step, kind, phase, key: `${kind}:${step}`, description: kind, input: {}, startedAt: '2026-01-01T00:00:00Z', attempt: 1, ...(phase === 'result' ? { result: {} } : {}), ...(batch ? { batch } : {}) };
}

describe('a hole in the journal', () => {
  it("is legal within the batch the journal ends in, right after the answer that asked for it", () => {
    // Step 2 was running when the process died; step 3 (and 4's intent) had finished or begun.
    const history = new History('r', [entry(1, 'model'), entry(3, 'read_file', 'result', [2, 4]), entry(4, 'task', 'intent', [2, 4])]);
    assert.equal(history.lastPosition, 4);
    assert.equal(history.lookup({ position: 2, kind: 'read_file', key: 'read_file:2', description: 'read_file' }), undefined, 'the missing step runs live');
    assert.ok(history.lookup({ position: 3, kind: 'read_file', key: 'read_file:3', description: 'read_file' })?.result);
  });

  it('outside a batch is still an error', () => {
    assert.throws(() => new History('r', [entry(1, 'model'), entry(3, 'read_file')]), (error: unknown) => error instanceof CorruptEntryError && /step 2 is missing/.test(error.message));
  });

  it('in a batch the run went on past is an error', () => {
    const entries = [entry(1, 'model'), entry(3, 'read_file', 'result', [2, 3]), entry(4, 'model')];
    assert.throws(() => new History('r', entries), /step 2 is missing/);
  });

  it('in a batch that no model answer asked for, or beside a step that is not of the batch, is an error', () => {
    assert.throws(() => new History('r', [entry(1, 'user'), entry(3, 'read_file', 'result', [2, 3])]), /step 1 is not the model answer that asked for them/);
    assert.throws(() => new History('r', [entry(1, 'model'), entry(3, 'user'), entry(4, 'read_file', 'result', [2, 4])]), /step 3 lies among steps 2 to 4.*not one of them/);
  });
});

describe('the valve running a batch', () => {
  let repo: TempRepo;
  before(async () => {
    repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
  });
  after(async () => {
    await repo.remove();
  });

  it("records a batch's steps as they finish, every append landing; a step of it that threw is run again only by opening the run again", async () => {
    const journal = await openJournal({ dir: repo.root, run: 'batch', task: 'read', model: 'm' });
    await journal.step('model', { turn: 1 }, () => ({ calls: 6 }));
    const batch: StepBatch = { size: 6 };
    let fail!: (error: Error) => void;
    const failing = new Promise<never>((_, reject) => (fail = reject));
    const steps = [0, 1, 2, 3, 4, 5].map((i) => journal.step('read_file', { path: `f${i}` }, () => (i < 2 ? failing : `content ${i}`), { batch }));
    await Promise.all(steps.slice(2)); // four appends made at once by this process: all land
    fail(new Error('the read failed'));
    await assert.rejects(steps[0]!, /the read failed/);
    await assert.rejects(steps[1]!, /the read failed/);
    // Steps 2 and 3 could not be given back (steps after them are recorded): no further step here.
    await assert.rejects(journal.step('model', { turn: 2 }, () => ({})), (error: unknown) => error instanceof UnfinishedBatchError && error.code === 'EBATCH');
    journal.close();
    await assertFsckClean(repo.root);
    const entries = await readRunEntries(await JournalStore.open(repo.root), 'batch');
    assert.deepEqual(entries.map((e) => e.step).sort(), [1, 4, 5, 6, 7]);

    // Opened again: the holes run live (step 3 lands before step 2), the others are handed back, and the run goes on.
    const again = await openJournal({ dir: repo.root, run: 'batch', task: 'read', model: 'm' });
    await again.step('model', { turn: 1 }, () => assert.fail('replayed'));
    const rerun: StepBatch = { size: 6 };
    let thirdDone!: () => void;
    const third = new Promise<void>((resolve) => (thirdDone = resolve));
    const results = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        again.step('read_file', { path: `f${i}` }, async () => {
          if (i > 1) assert.fail('replayed');
          if (i === 0) await third;
          return `content ${i}`;
        }, { batch: rerun }).finally(() => i === 1 && thirdDone()),
      ),
    );
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5].map((i) => `content ${i}`));
    await again.step('model', { turn: 2 }, () => ({ done: true }));
    assert.deepEqual(again.stats, { replayed: 5, live: 3 });
    assert.equal(again.record.current?.attempts.at(-1)?.firstLiveStep, 2, 'the attempt ran step 2 live, though step 3 landed first');
    again.close();
    assert.equal(new Set((await readRunEntries(await JournalStore.open(repo.root), 'batch')).map((e) => e.step)).size, 8, 'whole again');
  });

  // Valve logic alone: on the in-memory store (the appends above are git's).
  it('gives back the positions of a batch whose every step threw, for the next step', async () => {
    const store = new MemoryJournalStore();
    const journal = await openRunJournal(store, { run: 'all-failed', task: 'read', model: 'm' });
    await journal.step('model', { turn: 1 }, () => ({}));
    const batch: StepBatch = { size: 2 };
    const outcomes = await Promise.allSettled([0, 1].map((i) => journal.step('read_file', { path: `f${i}` }, () => Promise.reject(new Error(`failed ${i}`)), { batch })));
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
    await journal.step('model', { turn: 2 }, () => ({}));
    journal.close();
    const entries = await readRunEntries(store, 'all-failed');
    assert.deepEqual(entries.map((e) => e.step), [1, 2], 'the next step took position 2: no hole');
  });
});
