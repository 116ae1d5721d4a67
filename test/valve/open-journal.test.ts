// Opening a run (src/valve/open-journal.ts), on the in-memory store: openRun reads the run and
// holds its lock, and the caller then pins it (once) or releases it; a new run's start checkpoint
// is kept from a gc until the first step records it, an existing run's is not asked for; a run id
// that cannot be a file name is refused before anything is opened; openJournal finds the
// repository from a folder inside it (one real repository).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from '../../src/errors/index.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { readRunRecord } from '../../src/journal/reader.js';
import { openJournal, openRun, openRunJournal } from '../../src/valve/open-journal.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const HEAD = 'e'.repeat(40);
const TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const locked = (error: Error & { code?: string }) => error.code === 'ERUNLOCKED';
let repo: TempRepo | undefined;
after(async () => {
  await repo?.remove();
});

describe('opening a run', () => {
  it('reads a new run and holds its lock until it is pinned (once) or released', async () => {
    const store = new MemoryJournalStore({ local: { headCommit: HEAD } });
    const opening = await openRun(store, { run: 'new', task: 'a task', model: 'm' });
    assert.equal(opening.isNew, true);
    assert.equal(opening.record, undefined);
    await assert.rejects(openRun(store, { run: 'new', task: 'a task', model: 'm' }), locked, 'the lock is held while the caller decides');
    opening.release();
    await assert.rejects(opening.pin({}), /pinned or released already/);

    const again = await openRun(store, { run: 'new', task: 'a task', model: 'm' });
    const journal = await again.pin({ startCheckpoint: TREE, prompt: 'the task, expanded' });
    await assert.rejects(again.pin({}), /pinned or released already/);
    again.release(); // nothing once pinned: the valve holds the lock
    await assert.rejects(openRun(store, { run: 'new', task: 'a task', model: 'm' }), locked);
    assert.equal(store.local.keptTrees.get('new'), TREE, 'the start checkpoint is kept from a gc until a step records it');
    await journal.step('work', { n: 1 }, () => 1);
    journal.close();
    const record = (await readRunRecord(store, 'new'))!;
    assert.deepEqual([record.baseCommit, record.startCheckpoint, record.prompt], [HEAD, TREE, 'the task, expanded']);
  });

  it("reads an existing run's record and entries; its start is not asked again", async () => {
    const store = new MemoryJournalStore();
    const first = await openRunJournal(store, { run: 'old', task: 'a task', model: 'm' });
    await first.step('work', { n: 1 }, () => 1);
    await first.step('work', { n: 2 }, () => 2);
    first.close();
    const opening = await openRun(store, { run: 'old', task: 'a task', model: 'm' });
    assert.equal(opening.isNew, false);
    assert.equal(opening.record?.task, 'a task');
    const journal = await opening.pin({ startCheckpoint: TREE });
    assert.equal(journal.history.lastPosition, 2);
    assert.equal(store.local.keptTrees.has('old'), false, 'an existing run keeps no new start');
    journal.close();
  });

  it('refuses a run id that cannot be a file name before anything is opened', async () => {
    const store = new MemoryJournalStore();
    for (const run of ['', '../up', 'a/b', '.hidden', 'x'.repeat(101)]) {
      await assert.rejects(openRun(store, { run, task: 't', model: 'm' }), (error: unknown) => error instanceof UsageError && /is not a valid run id/.test(error.message), run);
    }
    assert.equal(store.local.locks.size, 0, 'no lock was taken');
  });

  it('openJournal finds the repository from a folder inside it', async () => {
    repo = await createTempRepo({ files: { 'src/a.txt': 'a\n' }, commit: true });
    mkdirSync(join(repo.root, 'src', 'deep'));
    const journal = await openJournal({ dir: join(repo.root, 'src', 'deep'), run: 'inside', task: 't', model: 'm' });
    await journal.step('work', { n: 1 }, () => 1);
    journal.close();
    assert.match(await repo.git('ls-tree', '--name-only', 'agent-journal:runs'), /^inside$/);
    await assert.rejects(openJournal({ dir: repo.root, run: 'no good', task: 't', model: 'm' }), UsageError);
  });
});
