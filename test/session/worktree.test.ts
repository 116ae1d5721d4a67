// Settling the working tree before a resumed run goes live (src/session/worktree.ts), in this process
// on a real repository, as decisions: files as the run left them say nothing; other files stop the
// run (DriftError, nothing changed) unless a flag, the default of a session's message or the
// person's answer says otherwise; a restore puts back only the files the run wrote (the person's
// own are left and handed back for the model); a step in flight at a crash keeps the files with no
// question (they may be its own); a clean checkout of the base commit is restored at once.
// The same through the CLI, with the question on a terminal: test/cli/drift.test.ts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DriftError } from '../../src/errors/index.js';
import { ObjectStore } from '../../src/git/object-store.js';
import { findRepository } from '../../src/git/repository.js';
import { readRunRecord } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import type { SessionEvent, SessionOptions } from '../../src/session/types.js';
import { settleWorktree } from '../../src/session/worktree.js';
import { openRunJournal } from '../../src/valve/open-journal.js';
import { WorktreeSnapshotter } from '../../src/worktree/snapshot.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
let store: JournalStore;
let snapshotter: WorktreeSnapshotter;

before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'one\n' }, commit: true });
  const found = findRepository(repo.root);
  store = await JournalStore.open(repo.root);
  snapshotter = new WorktreeSnapshotter(found, new ObjectStore(found.commonDir));
});
after(async () => {
  await repo.remove();
});

// Run `run`: step 1 writes b.txt, step 2 edits a.txt, each checkpointing the tree; with `inFlight`,
// a third step dies inside (its intent recorded, no result), as a crash leaves it.
async function recordRun(run: string, inFlight = false): Promise<void> {
  const journal = await openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test', startCheckpoint: snapshotter.snapshot().tree });
  const checkpoint = () => snapshotter.snapshot();
  await journal.step('write_file', { path: 'b.txt' }, () => (repo.write('b.txt', 'the run wrote b\n'), 'ok'), { intent: true, checkpoint });
  await journal.step('edit_file', { path: 'a.txt' }, () => (repo.write('a.txt', 'the run edited a\n'), 'ok'), { intent: true, checkpoint });
  if (inFlight) await new Promise<void>((entered) => void journal.step('run_bash', { command: 'make' }, () => (entered(), new Promise<never>(() => {})), { intent: true }));
  journal.close();
}

// settleWorktree for resuming `run`, as the session calls it; the events it emitted, and what the
// person was asked (onDrift answers `answer`, when given).
async function settle(run: string, options: Pick<SessionOptions, 'worktree'> & { answer?: 'restore' | 'keep' | 'stop'; keepByDefault?: boolean } = {}) {
  const events: SessionEvent[] = [];
  const asked: string[][] = [];
  const journal = await openRunJournal(store, { run, task: `task of ${run}`, model: 'claude-test' });
  try {
    const settled = await settleWorktree({
      run,
      root: repo.root,
      record: (await readRunRecord(store, run))!,
      history: journal.history,
      snapshotter,
      store,
      keepReachable: async () => {},
      options: {
        ...(options.worktree ? { worktree: options.worktree } : {}),
        ...(options.answer ? { onDrift: async ({ changes }) => (asked.push(changed(changes)), options.answer!) } : {}),
      },
      ...(options.keepByDefault ? { keepByDefault: true } : {}),
      emit: (event) => events.push(event),
    });
    return { settled, events, asked };
  } finally {
    journal.close();
  }
}

const changed = (changes: Array<{ path: string; change: string }>) => changes.map((c) => `${c.change} ${c.path}`).sort();

describe('the working tree before a resumed run goes live', () => {
  before(() => recordRun('drift'));

  it('as the run left it: nothing to settle, nothing said', async () => {
    const { settled, events } = await settle('drift');
    assert.deepEqual(settled, { personChanges: [] });
    assert.deepEqual(events, []);
  });

  it('otherwise stops with the files named and changes nothing, unless told to keep them (flag, default or answer)', async () => {
    repo.write('b.txt', 'the person changed b\n');
    repo.write('notes.txt', 'the person wrote this\n');
    const stopped = settle('drift');
    await assert.rejects(stopped, (error: unknown) => error instanceof DriftError && error.code === 'EDRIFT' && error.data.step === 2);
    await stopped.catch((error: DriftError) => assert.deepEqual(changed(error.data.changes), ['added notes.txt', 'modified b.txt']));
    assert.equal(repo.read('b.txt'), 'the person changed b\n', 'nothing changed');

    for (const [how, reason] of [[{ worktree: 'keep' as const }, 'flag'], [{ keepByDefault: true }, 'default'], [{ answer: 'keep' as const }, 'chosen']] as const) {
      const { settled, events } = await settle('drift', how);
      assert.deepEqual(changed(settled.personChanges), ['added notes.txt', 'modified b.txt'], `${reason}: the model is told of them`);
      assert.deepEqual(events.map((e) => e.type === 'worktree-kept' && [e.reason, e.step]), [[reason, 2]]);
    }
    assert.equal(repo.read('b.txt'), 'the person changed b\n');
  });

  it('a restore puts back the files the run wrote, and hands back the ones it never wrote', async () => {
    const { settled, events, asked } = await settle('drift', { answer: 'restore' });
    assert.deepEqual(asked, [['added notes.txt', 'modified b.txt']], 'the person was asked, with the files');
    assert.equal(repo.read('b.txt'), 'the run wrote b\n');
    assert.equal(repo.read('notes.txt'), 'the person wrote this\n', 'a file the run never wrote is left');
    assert.deepEqual(changed(settled.personChanges), ['added notes.txt']);
    const restored = events.find((e) => e.type === 'worktree-restored');
    assert.ok(restored && restored.type === 'worktree-restored');
    assert.equal(restored.reason, 'chosen');
    assert.deepEqual(restored.written, ['b.txt']);
    assert.ok(restored.saved?.ref.startsWith('refs/savepoint/saved/'), 'the person\'s b.txt was set aside first');
    assert.equal(await repo.git('show', `${restored.saved!.ref}:b.txt`), 'the person changed b');
    rmSync(join(repo.root, 'notes.txt'));
  });

  it('a clean checkout of the base commit (a fresh clone) is restored at once, with no question', async () => {
    await repo.git('checkout', '-q', '--', '.');
    rmSync(join(repo.root, 'b.txt'));
    const { settled, events, asked } = await settle('drift', { answer: 'stop' });
    assert.deepEqual(asked, []);
    assert.deepEqual(settled, { personChanges: [] });
    assert.deepEqual(events.map((e) => e.type === 'worktree-restored' && e.reason), ['clean-base']);
    assert.equal(repo.read('a.txt'), 'the run edited a\n');
    assert.equal(repo.read('b.txt'), 'the run wrote b\n');
  });

  it('with a step in flight at a crash, keeps the files with no question: they may be its own', async () => {
    await recordRun('crashed', true);
    repo.write('a.txt', 'changed by the command in flight, perhaps\n');
    const { settled, events, asked } = await settle('crashed', { answer: 'stop' });
    assert.deepEqual(asked, []);
    assert.deepEqual(settled, { personChanges: [] }, 'not told as the person\'s: the model hears of the step in flight');
    assert.deepEqual(events.map((e) => e.type === 'worktree-kept' && [e.reason, changed(e.changes)]), [['in-flight', ['modified a.txt']]]);
    assert.equal(repo.read('a.txt'), 'changed by the command in flight, perhaps\n');
  });
});
