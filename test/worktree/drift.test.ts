// Drift, at the function level: findDrift compares the working tree with a checkpoint and says what
// differs by file, and whether the tree is a clean checkout of the run's base commit (which a resume
// restores without asking); DriftError's message names the files and both ways on.
import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { describeChanges, DriftError } from '../../src/errors/index.js';
import { findDrift } from '../../src/worktree/drift.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import { cloneOf, snapshotterFor } from './support.js';

const scratch = useScratch();
const repoWith = (files: Record<string, string>): Promise<TempRepo> => scratch.repo(files);

describe('findDrift', { concurrency: true }, () => {
  test('no drift when the working tree is the checkpoint', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    repo.write('b.txt', 'the run wrote this\n');
    const snapshotter = snapshotterFor(repo.root);
    const checkpoint = snapshotter.snapshot().tree;
    assert.equal(await findDrift(snapshotter.objects, snapshotter, checkpoint, 3, await repo.git('rev-parse', 'HEAD')), undefined);
  });

  test('each differing file is listed as modified, added or deleted; not a clean base', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n', 'src/b.js': 'b\n', 'src/c.js': 'c\n' });
    repo.write('src/b.js', 'the run changed this\n');
    const snapshotter = snapshotterFor(repo.root);
    const checkpoint = snapshotter.snapshot().tree;
    repo.write('src/b.js', 'edited by hand\n');
    unlinkSync(join(repo.root, 'src/c.js'));
    repo.write('hand-made.txt', 'new\n');
    const drift = await findDrift(snapshotter.objects, snapshotter, checkpoint, 4, await repo.git('rev-parse', 'HEAD'));
    assert.ok(drift);
    assert.equal(drift.checkpoint, checkpoint);
    assert.equal(drift.step, 4);
    assert.deepEqual(drift.changes, [
      { path: 'hand-made.txt', change: 'added' },
      { path: 'src/b.js', change: 'modified' },
      { path: 'src/c.js', change: 'deleted' },
    ]);
    assert.equal(drift.cleanBase, false);
    assert.equal(drift.current.tree, snapshotter.snapshot().tree);
  });

  test('a fresh clone of the base commit is recognised as a clean base', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const base = await repo.git('rev-parse', 'HEAD');
    repo.write('a.txt', 'the run changed this\n');
    const checkpoint = snapshotterFor(repo.root).snapshot().tree;
    const clone = await cloneOf(repo.root, checkpoint);
    scratch.defer(() => clone.remove());
    const snapshotter = snapshotterFor(clone.root);
    const drift = await findDrift(snapshotter.objects, snapshotter, checkpoint, 2, base);
    assert.ok(drift);
    assert.equal(drift.cleanBase, true);
    assert.deepEqual(drift.changes, [{ path: 'a.txt', change: 'modified' }]);

    // Not clean any more once the user touched it, nor when the base commit is not in this clone.
    clone.write('extra.txt', 'x\n');
    const touched = await findDrift(snapshotter.objects, snapshotter, checkpoint, 2, base);
    assert.equal(touched?.cleanBase, false);
    const unknownBase = await findDrift(snapshotter.objects, snapshotter, checkpoint, 2, '0123456789abcdef0123456789abcdef01234567');
    assert.equal(unknownBase?.cleanBase, false);
  });
});

describe('how drift is told', () => {
  test('describeChanges lists up to eight files and counts the rest', () => {
    const changes = Array.from({ length: 11 }, (_, i) => ({ path: `f${i}.txt`, change: 'modified' as const }));
    assert.equal(describeChanges(changes.slice(0, 2)), 'modified f0.txt, modified f1.txt');
    assert.equal(describeChanges(changes), `${changes.slice(0, 8).map((c) => `modified ${c.path}`).join(', ')}, and 3 more`);
  });

  test('DriftError names the run, the step, the files, and both ways on', () => {
    const error = new DriftError('fix-it-1', 6, [{ path: 'src/a.js', change: 'modified' }]);
    assert.equal(error.code, 'EDRIFT');
    assert.match(error.message, /run fix-it-1 recorded after step 6/);
    assert.match(error.message, /modified src\/a\.js/);
    assert.match(error.message, /--restore/);
    assert.match(error.message, /--keep-worktree/);
    assert.match(new DriftError('r', 0, []).message, /when it started/);
  });
});
