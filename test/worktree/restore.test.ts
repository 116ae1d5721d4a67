// Putting the working tree back to a checkpoint, on real repositories: files that differ are written
// (content, executable bit, symlinks, new directories), tracked files the checkpoint lacks are
// deleted (git can bring them back), untracked files it never saw are kept and named, and HEAD and
// the index are never touched. The outcome is judged by taking a new snapshot and by git.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { restoreWorktree } from '../../src/worktree/restore.js';
import { userState } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import { cloneOf, gitWorktreeTree, objectsFor, snapshotterFor } from './support.js';

const scratch = useScratch();
const repoWith = (files: Record<string, string>): Promise<TempRepo> => scratch.repo(files);

describe('restoring a checkpoint', { concurrency: true }, () => {
  test('back to an earlier checkpoint: changed files rewritten, tracked extras deleted, untracked strangers kept and named', async () => {
    const repo = await repoWith({ 'src/a.js': 'a1\n', 'src/b.js': 'b1\n', 'README.md': 'readme\n' });
    repo.write('src/a.js', 'a2 (the agent)\n');
    repo.write('notes/plan.md', 'the agent wrote this\n');
    repo.write('tool.sh', '#!/bin/sh\n');
    chmodSync(join(repo.root, 'tool.sh'), 0o755);
    symlinkSync('src/a.js', join(repo.root, 'link.js'));
    const snapshotter = snapshotterFor(repo.root);
    const checkpoint = snapshotter.snapshot();

    // After the checkpoint: more edits, a deleted tracked file, a committed-then-tracked file the
    // checkpoint lacks, a deleted untracked file, a changed mode, and a file the run never saw.
    repo.write('src/a.js', 'a3 (a hand edit)\n');
    unlinkSync(join(repo.root, 'src/b.js'));
    unlinkSync(join(repo.root, 'notes/plan.md'));
    chmodSync(join(repo.root, 'tool.sh'), 0o644);
    unlinkSync(join(repo.root, 'link.js'));
    repo.write('link.js', 'now a plain file\n');
    repo.write('added-later.js', 'tracked after the checkpoint\n');
    await repo.git('add', 'added-later.js');
    repo.write('scratch/mine.txt', 'the user made this; the run never saw it\n');
    const before = await userState(repo.root);

    const result = await restoreWorktree(repo.root, snapshotter.objects, checkpoint.tree, snapshotter.snapshot(), snapshotter.trackedPaths());

    assert.deepEqual(result.written.sort(), ['link.js', 'notes/plan.md', 'src/a.js', 'src/b.js', 'tool.sh']);
    assert.deepEqual(result.deleted, ['added-later.js'], 'a tracked file the checkpoint lacks is deleted (git has it)');
    assert.deepEqual(result.kept, ['scratch/mine.txt'], 'an untracked file the run never saw is kept, and named');
    assert.equal(repo.read('src/a.js'), 'a2 (the agent)\n');
    assert.equal(repo.read('src/b.js'), 'b1\n');
    assert.equal(repo.read('notes/plan.md'), 'the agent wrote this\n');
    assert.ok(statSync(join(repo.root, 'tool.sh')).mode & 0o100, 'the executable bit is back');
    assert.ok(lstatSync(join(repo.root, 'link.js')).isSymbolicLink());
    assert.equal(readlinkSync(join(repo.root, 'link.js')), 'src/a.js');
    assert.equal(repo.read('scratch/mine.txt'), 'the user made this; the run never saw it\n');
    assert.ok(!existsSync(join(repo.root, 'added-later.js')));

    // The working tree is the checkpoint again (plus the kept stranger), by git's own account.
    unlinkSync(join(repo.root, 'scratch/mine.txt'));
    assert.equal(await gitWorktreeTree(repo.root), checkpoint.tree);
    const after = await userState(repo.root);
    assert.equal(after.head, before.head);
    assert.equal(after.index, before.index, 'the index is not touched');
  });

  test('nothing differs: nothing is written', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    repo.write('b.txt', 'b\n');
    const snapshotter = snapshotterFor(repo.root);
    const checkpoint = snapshotter.snapshot();
    const result = await restoreWorktree(repo.root, snapshotter.objects, checkpoint.tree, snapshotter.snapshot(), snapshotter.trackedPaths());
    assert.deepEqual(result, { written: [], deleted: [], kept: [], left: [], unrevealed: [], unrestorable: [] });
  });

  test("a fresh clone of the base commit gets the run's uncommitted edits back", async () => {
    const repo = await repoWith({ 'src/calc.js': 'export const add = (a, b) => a - b;\n', 'test.sh': 'node check\n', 'old.txt': 'old\n' });
    repo.write('src/calc.js', 'export const add = (a, b) => a + b;\n');
    repo.write('src/new/helper.js', 'export {};\n');
    unlinkSync(join(repo.root, 'old.txt'));
    const checkpoint = snapshotterFor(repo.root).snapshot();

    const clone = await cloneOf(repo.root, checkpoint.tree);
    scratch.defer(() => clone.remove());
    const snapshotter = snapshotterFor(clone.root);
    const result = await restoreWorktree(clone.root, objectsFor(clone.root), checkpoint.tree, snapshotter.snapshot(), snapshotter.trackedPaths());
    assert.deepEqual(result.written.sort(), ['src/calc.js', 'src/new/helper.js']);
    assert.deepEqual(result.deleted, ['old.txt']);
    assert.equal(clone.read('src/calc.js'), 'export const add = (a, b) => a + b;\n');
    assert.equal(snapshotterFor(clone.root).snapshot().tree, checkpoint.tree);
    assert.equal((await clone.git('status', '--porcelain')).includes('src/calc.js'), true, 'the edits are uncommitted there too');
  });
});
