// A restore over the person's work, on real repositories: with `only`, just the files the run wrote
// are written or removed (an untracked one it wrote too), every other difference is left and named;
// each file about to be overwritten or removed is first committed by setAsideFiles under
// refs/savepoint/saved/<run>/<n>, bytes, mode and symlink as they were, and `git checkout <ref> -- :/`
// puts them back. The person's index and HEAD are never touched. filesTheRunWrote reads the run's
// checkpoints: a person's kept tree (a user step's) is not the run's writing.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findRepository } from '../../src/git/repository.js';
import { filesTheRunWrote } from '../../src/worktree/drift.js';
import { restoreWorktree } from '../../src/worktree/restore.js';
import { setAsideFiles } from '../../src/worktree/set-aside.js';
import { gitOut, userState } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { snapshotterFor } from './support.js';

const scratch = useScratch();

describe('a restore that sets aside what it overwrites', { concurrency: true }, () => {
  test('writes only the run\'s files, saves each one it overwrites or removes first, leaves the rest; the saved ref brings them back', async () => {
    const repo = await scratch.repo({ 'src/a.js': 'a1\n', 'test.js': 'test\n', 'README.md': 'readme\n' });
    const snapshotter = snapshotterFor(repo.root);
    const start = snapshotter.snapshot();
    // The run: edits a.js, makes an executable tool.sh and an untracked notes.txt.
    repo.write('src/a.js', 'a2 (the run)\n');
    repo.write('tool.sh', '#!/bin/sh\necho run\n');
    chmodSync(join(repo.root, 'tool.sh'), 0o755);
    const checkpoint = snapshotter.snapshot();
    // The person: edits a.js and test.js, replaces tool.sh by a link, makes mine.txt.
    repo.write('src/a.js', 'a3 (mine)\n');
    repo.write('test.js', 'test\nmy line\n');
    unlinkSync(join(repo.root, 'tool.sh'));
    symlinkSync('README.md', join(repo.root, 'tool.sh'));
    repo.write('mine.txt', 'mine\n');
    const { head, index } = await userState(repo.root);

    const wrote = await filesTheRunWrote(snapshotter.objects, start.tree, [{ tree: checkpoint.tree, person: false }]);
    assert.deepEqual([...wrote].sort(), ['src/a.js', 'tool.sh']);
    const repository = findRepository(repo.root);
    let saved: ReturnType<typeof setAsideFiles> | undefined;
    const result = await restoreWorktree(repo.root, snapshotter.objects, checkpoint.tree, snapshotter.snapshot(), snapshotter.trackedBlobs(), undefined, undefined, undefined, undefined, {
      only: (path) => wrote.has(path),
      setAside: (paths) => void (saved = setAsideFiles(repository, 'the-run', paths, 'set aside for the test')),
    });
    assert.deepEqual(result.written.sort(), ['src/a.js', 'tool.sh']);
    assert.deepEqual(result.left, ['test.js']);
    assert.deepEqual(result.kept, ['mine.txt']);
    assert.equal(repo.read('src/a.js'), 'a2 (the run)\n');
    assert.equal(repo.read('test.js'), 'test\nmy line\n', 'a file the run never wrote is never overwritten');
    assert.ok(lstatSync(join(repo.root, 'tool.sh')).isFile());
    const after = await userState(repo.root);
    assert.deepEqual({ head: after.head, index: after.index }, { head, index }, 'HEAD and the index are untouched');

    assert.ok(saved);
    assert.equal(saved.ref, 'refs/savepoint/saved/the-run/1');
    assert.deepEqual([...saved.files].sort(), ['src/a.js', 'tool.sh']);
    assert.equal(await gitOut(repo.root, ['ls-tree', '-r', '--format=%(objectmode) %(path)', saved.ref]), '100644 src/a.js\n120000 tool.sh');
    assert.equal(await gitOut(repo.root, ['rev-parse', `${saved.ref}^`]), await gitOut(repo.root, ['rev-parse', 'HEAD']), 'HEAD is its parent');

    await gitOut(repo.root, saved.command.split(' ').slice(1));
    assert.equal(repo.read('src/a.js'), 'a3 (mine)\n', 'the command brings the person\'s version back');
    assert.equal(readlinkSync(join(repo.root, 'tool.sh')), 'README.md');
    assert.equal(repo.read('test.js'), 'test\nmy line\n');
  });

  test('an untracked file the run wrote and then removed is removed again (saved first); one it never wrote is kept', async () => {
    const repo = await scratch.repo({ 'README.md': 'readme\n' });
    const snapshotter = snapshotterFor(repo.root);
    const start = snapshotter.snapshot();
    repo.write('scratch.txt', 'the run\'s\n');
    const made = snapshotter.snapshot();
    unlinkSync(join(repo.root, 'scratch.txt'));
    const removed = snapshotter.snapshot();
    repo.write('scratch.txt', 'the person made it again\n');
    repo.write('other.txt', 'the person\'s\n');
    const wrote = await filesTheRunWrote(snapshotter.objects, start.tree, [{ tree: made.tree, person: false }, { tree: removed.tree, person: false }]);
    const saved: string[][] = [];
    const result = await restoreWorktree(repo.root, snapshotter.objects, removed.tree, snapshotter.snapshot(), snapshotter.trackedBlobs(), undefined, undefined, undefined, undefined, {
      only: (path) => wrote.has(path),
      setAside: (paths) => void saved.push(setAsideFiles(findRepository(repo.root), 'r.', paths, 'set aside').files),
    });
    assert.deepEqual(result.deleted, ['scratch.txt']);
    assert.deepEqual(result.kept, ['other.txt']);
    assert.ok(!existsSync(join(repo.root, 'scratch.txt')));
    assert.deepEqual(saved, [['scratch.txt']]);
    assert.equal(await gitOut(repo.root, ['show', 'refs/savepoint/saved/r._/1:scratch.txt']), 'the person made it again', 'a run id ending in "." still makes a valid ref');
  });

  test("the person's kept tree is not the run's writing", async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const snapshotter = snapshotterFor(repo.root);
    const start = snapshotter.snapshot();
    repo.write('a.txt', 'the run\n');
    const run = snapshotter.snapshot();
    repo.write('b.txt', 'the person, kept\n');
    const kept = snapshotter.snapshot();
    repo.write('a.txt', 'the run again\n');
    const later = snapshotter.snapshot();
    const trail = [{ tree: run.tree, person: false }, { tree: kept.tree, person: true }, { tree: later.tree, person: false }];
    assert.deepEqual([...(await filesTheRunWrote(snapshotter.objects, start.tree, trail))], ['a.txt']);
  });
});
