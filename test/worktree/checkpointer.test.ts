// The checkpoint a step records, taken by the checkpointer the valve is handed when the run opens:
// the tree git makes of the working tree (the named files only, when an edit names them), taken
// under the file-step lock a run shares with its subagents, so a checkpoint holds whole steps.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FileStepLock, WorktreeCheckpointer, type HeldStep } from '../../src/worktree/checkpointer.js';
import { useScratch } from '../helpers/scratch.js';
import { gitWorktreeTree, snapshotterFor } from './support.js';

const scratch = useScratch();

describe("a run's checkpointer", () => {
  test('takes the whole tree, or the files a step names, as git makes the tree', async () => {
    const repo = await scratch.repo({ 'src/a.js': 'a\n', 'src/b.js': 'b\n' });
    const checkpointer = new WorktreeCheckpointer(snapshotterFor(repo.root), new FileStepLock());
    assert.equal((await checkpointer.take()).tree, await gitWorktreeTree(repo.root));
    writeFileSync(join(repo.root, 'src/a.js'), 'a, edited\n');
    const edited = await checkpointer.take(['src/a.js']);
    assert.equal(edited.tree, await gitWorktreeTree(repo.root));
    assert.deepEqual(edited.skipped, []);
  });

  test("waits for a step that holds the file-step lock, so its checkpoint holds that step's work whole", async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const lock = new FileStepLock();
    const checkpointer = new WorktreeCheckpointer(snapshotterFor(repo.root), lock);
    const order: string[] = [];
    const release = await lock.acquire(); // another subagent's step, under way
    const taking = checkpointer.take().then((checkpoint) => (order.push('taken'), checkpoint));
    writeFileSync(join(repo.root, 'a.txt'), 'the other step wrote this\n');
    order.push('released');
    release();
    const checkpoint = await taking;
    assert.deepEqual(order, ['released', 'taken']);
    assert.equal(checkpoint.tree, await gitWorktreeTree(repo.root), "the other step's write is in it");
  });

  test("a subagent's: the lock its step took when it started is the one released; a step that took none takes it then", async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const lock = new FileStepLock();
    const held: HeldStep = {};
    const checkpointer = new WorktreeCheckpointer(snapshotterFor(repo.root), lock, held);
    held.release = await lock.acquire(); // the step started: it holds the lock until its checkpoint
    writeFileSync(join(repo.root, 'a.txt'), 'the step wrote this\n');
    assert.equal((await checkpointer.take(['a.txt'])).tree, await gitWorktreeTree(repo.root));
    assert.equal(held.release, undefined);
    (await lock.acquire())(); // free again: the checkpoint released the step's lock
    await checkpointer.take(); // a declined step took no lock: it takes and releases one now
    (await lock.acquire())();
  });
});
