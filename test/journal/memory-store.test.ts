// The journal in memory (src/journal/memory-store.ts) as a store, with git as the judge of its
// objects: the same files give the same blob and tree ids as the git store's branch; appends land
// in the order they were asked, each a commit on the last; a file read back is the one written,
// bounded by the size asked; a fault before the branch moves leaves the tip where it was; an
// afterAppend hook that throws still has its commit on the branch, and says so. The valve and the
// loop on it: test/valve/memory-store.test.ts, test/agent/loop.test.ts.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MissingObjectError, ObjectTooLargeError } from '../../src/errors/index.js';
import { MemoryJournalStore } from '../../src/journal/memory-store.js';
import { JournalStore } from '../../src/journal/store.js';
import { appendedCommitOf, type FaultPoint, type JournalFile } from '../../src/journal/store-options.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const FILES: JournalFile[] = [
  { path: 'runs/a/run.json', content: '{"id":"a"}\n' },
  { path: 'runs/a/steps/000/000001-work.json', content: Buffer.from('{"step":1}\n') },
  { path: 'runs/b/run.json', content: '{"id":"b"}\n' },
];

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.remove();
});

describe('the in-memory journal store', () => {
  it('holds the very objects git makes of the same files: blob and tree ids alike, a linked tree included', async () => {
    const repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
    repos.push(repo);
    const git = await JournalStore.open(repo.root);
    const memory = new MemoryJournalStore();
    await git.append(FILES, 'three files');
    await memory.append(FILES, 'three files');
    for (const path of ['runs', 'runs/a', 'runs/a/steps/000']) {
      assert.equal((await memory.treeAt(path.split('/').slice(0, -1).join('/') || ''))?.get(path.split('/').at(-1)!)?.oid, await repo.git('rev-parse', `agent-journal:${path}`), path);
    }
    assert.equal((await memory.treeAt('runs/a'))?.get('run.json')?.oid, await repo.git('rev-parse', 'agent-journal:runs/a/run.json'));

    // A tree linked in by id (as a checkpoint is): that tree, whole, at its place.
    const memoryLinked = (await memory.treeAt('runs'))!.get('a')!.oid;
    await memory.append([{ path: 'runs/c/worktree', tree: memoryLinked }], 'a linked tree');
    assert.equal((await memory.treeAt('runs/c'))?.get('worktree')?.oid, memoryLinked);
    assert.deepEqual([...(await memory.treeAt('runs/c/worktree'))!.keys()].sort(), ['run.json', 'steps']);
  });

  it('lands appends in the order asked, each a commit on the last, and reads files back as written, bounded by the size asked', async () => {
    const store = new MemoryJournalStore();
    assert.equal(store.tip, undefined);
    assert.equal(await store.fileAt('runs/a/run.json'), undefined);
    const landed = await Promise.all([store.append(FILES.slice(0, 1), 'first'), store.append(FILES.slice(1), 'second'), store.append([{ path: 'runs/a/run.json', content: 'replaced\n' }], 'third')]);
    assert.equal(store.tip, landed[2]);
    assert.deepEqual((await store.log()).map((c) => [c.oid, c.message.trim()]), [[landed[2], 'third'], [landed[1], 'second'], [landed[0], 'first']]);
    assert.equal((await store.fileAt('runs/a/run.json'))?.toString(), 'replaced\n');
    assert.equal((await store.fileAt('runs/b/run.json'))?.toString(), '{"id":"b"}\n', 'an append keeps what it does not name');
    await assert.rejects(store.fileAt('runs/b/run.json', 3), ObjectTooLargeError);
    await assert.rejects(store.objects.read('0'.repeat(40), 'blob'), MissingObjectError);
    await assert.rejects(store.objects.read(store.tip!, 'blob'), /is a commit, expected a blob/);
  });

  it('leaves the tip where it was when an append stops before the branch moves', async () => {
    for (const point of ['before-objects', 'after-objects'] as FaultPoint[]) {
      let armed = true;
      const store = new MemoryJournalStore({ faultPoint: (at) => {
        if (armed && at === point) throw new Error(`stopped at ${at}`);
      } });
      armed = false;
      const tip = await store.append(FILES.slice(0, 1), 'kept');
      armed = true;
      await assert.rejects(store.append(FILES.slice(2), 'lost'), new RegExp(`stopped at ${point}`));
      assert.equal(store.tip, tip, point);
      assert.equal(await store.fileAt('runs/b/run.json'), undefined, point);
      armed = false;
      await store.append(FILES.slice(2), 'again');
      assert.deepEqual((await store.log()).map((c) => c.message.trim()), ['again', 'kept'], `${point}: the next append goes on from the tip`);
    }
  });

  it('an afterAppend hook that throws (a push that failed) leaves its commit on the branch and says which', async () => {
    const told: Array<{ fence: boolean; what?: string }> = [];
    const store = new MemoryJournalStore({
      afterAppend: async (_commit, how) => {
        told.push(how);
        if (how.fence) throw new Error('the remote is gone');
      },
    });
    await store.append(FILES.slice(0, 1), 'plain');
    const error = await store.append(FILES.slice(1), 'fenced', undefined, 'deploy prod').catch((thrown: unknown) => thrown);
    assert.match(String(error), /the remote is gone/);
    assert.equal(appendedCommitOf(error), store.tip, 'the error names the commit that landed');
    assert.deepEqual(told, [{ fence: false }, { fence: true, what: 'deploy prod' }]);
  });
});
