// What a finished run's replay says about the repository as the run left it (src/session/finished-run.ts),
// in this process on a real repository: nothing while HEAD and the files are as the run left them;
// the files changed since its last checkpoint (its start's, when it checkpointed nothing) when they
// differ; a new commit of HEAD as the repository moving on; and a run recorded before the finishing
// HEAD was noted judged by its base commit alone. What the CLI prints of it: test/cli/finished-runs.test.ts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ObjectStore } from '../../src/git/object-store.js';
import { findRepository, type Repository } from '../../src/git/repository.js';
import type { RunRecord } from '../../src/journal/entry.js';
import { readRunRecord } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { finishedRunChanges, finishedRunMoved } from '../../src/session/finished-run.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import type { RunJournal } from '../../src/valve/run-journal.js';
import { WorktreeSnapshotter } from '../../src/worktree/snapshot.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
let gitRepo: Repository;
let store: JournalStore;
let snapshotter: WorktreeSnapshotter;

before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'one\n' }, commit: true });
  gitRepo = findRepository(repo.root);
  store = await JournalStore.open(repo.root);
  snapshotter = new WorktreeSnapshotter(gitRepo, new ObjectStore(gitRepo.commonDir));
});
after(async () => {
  await repo.remove();
});

// Run `run` to its end: with `write`, one step writes that file and checkpoints the tree after it.
async function finishedRun(run: string, write?: string): Promise<{ record: RunRecord; journal: RunJournal<JournalStore> }> {
  const journal = await openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', startCheckpoint: snapshotter.snapshot().tree });
  try {
    if (write) await journal.step('write_file', { path: write }, () => (repo.write(write, `${run}\n`), 'written'), { intent: true, checkpoint: () => snapshotter.snapshot() });
    else await journal.step('read_file', { path: 'a.txt' }, () => 'one');
    await journal.finish('finished', { final: 'done' });
  } finally {
    journal.close();
  }
  return { record: (await readRunRecord(store, run))!, journal };
}

describe('a finished run and the repository since', () => {
  it('says nothing while HEAD and the files are as the run left them, and names the files changed since its last checkpoint', async () => {
    const { record, journal } = await finishedRun('writes', 'b.txt');
    assert.ok(record.attempts.at(-1)!.end?.head, 'the run noted where HEAD was when it finished');
    assert.equal(await finishedRunChanges(record, journal, snapshotter), undefined);
    assert.equal(await finishedRunMoved(record, journal, snapshotter, gitRepo), undefined);

    repo.write('a.txt', 'changed since\n');
    rmSync(join(repo.root, 'b.txt'));
    repo.write('c.txt', 'new\n');
    const changes = await finishedRunChanges(record, journal, snapshotter);
    assert.equal(changes?.step, 1, 'measured from the checkpoint of step 1');
    assert.deepEqual(
      changes?.changes.map((c) => `${c.change} ${c.path}`).sort(),
      ['added c.txt', 'deleted b.txt', 'modified a.txt'],
    );
    assert.deepEqual(await finishedRunMoved(record, journal, snapshotter, gitRepo), { changes: changes!.changes }, 'other files: moved on, HEAD where it was');

    // The files back as the run left them, and a new commit on top: moved on by the commit alone.
    repo.write('a.txt', 'one\n');
    repo.write('b.txt', 'writes\n');
    rmSync(join(repo.root, 'c.txt'));
    assert.equal(await finishedRunChanges(record, journal, snapshotter), undefined);
    const left = record.attempts.at(-1)!.end!.head!;
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'b.txt');
    const head = await repo.git('rev-parse', 'HEAD');
    assert.deepEqual(await finishedRunMoved(record, journal, snapshotter, gitRepo), { commit: { from: left, to: head }, changes: [] });
  });

  it('measures a run that checkpointed nothing from its start, and judges a run without a noted HEAD by its base commit alone', async () => {
    const { record, journal } = await finishedRun('reads');
    assert.equal(await finishedRunChanges(record, journal, snapshotter), undefined);
    repo.write('a.txt', 'edited after the run\n');
    const changes = await finishedRunChanges(record, journal, snapshotter);
    assert.deepEqual(changes, { step: 0, changes: [{ path: 'a.txt', change: 'modified' }] }, 'from the start checkpoint, step 0');

    // As an older build recorded it: no head at its end. HEAD is its base commit, so the files that
    // differ do not make it a new piece of work (a fresh clone's replay names them instead).
    const older: RunRecord = { ...record, attempts: record.attempts.map(({ end, ...attempt }) => ({ ...attempt, ...(end ? { end: { ...end, head: undefined } } : {}) })) };
    assert.equal(older.baseCommit, await repo.git('rev-parse', 'HEAD'));
    assert.equal(await finishedRunMoved(older, journal, snapshotter, gitRepo), undefined);
    await repo.git('commit', '-q', '-am', 'a.txt');
    const moved = await finishedRunMoved(older, journal, snapshotter, gitRepo);
    assert.deepEqual(moved, { commit: { from: record.baseCommit, to: await repo.git('rev-parse', 'HEAD') }, changes: [] });
  });
});
