// A checkpoint's files as layers over git's index (the tracked changes, the untracked files as the
// hasher lists them), and what differs between two checkpoints on the same index: the tracked
// changes, and of the untracked files only those hashed again (or, for a new list, by path).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FileEntry, SkippedFile } from '../../src/worktree/entries.js';
import { changedSince, layerFiles, skippedUntracked, treeFiles, untrackedEntry, type Layers, type UntrackedFiles } from '../../src/worktree/layers.js';

const file = (c: string, mode = '100644'): FileEntry => ({ mode, oid: c.repeat(40) });
const big: SkippedFile = { path: 'video.mp4', size: 50_000_000, reason: 'larger than 10 MB' };
const index = new Map([['README.md', file('1')], ['src/a.ts', file('2')], ['old.txt', file('3')]]);
const paths = ['notes.txt', 'video.mp4', 'gone.tmp'];

function layers(changes: Array<[string, FileEntry | undefined]>, untracked: UntrackedFiles): Layers {
  return { index, changes: new Map(changes), untracked };
}

describe('checkpoint layers', () => {
  it('lay the working tree\'s changes and the untracked files over the index, leaving out what is too big or gone', () => {
    assert.equal(untrackedEntry(big), undefined);
    assert.equal(untrackedEntry(undefined), undefined);
    assert.deepEqual(untrackedEntry(file('9')), file('9'));
    const changes = new Map<string, FileEntry | undefined>([['src/a.ts', file('4')], ['old.txt', undefined], ['new-tracked.ts', file('5', '100755')]]);
    assert.deepEqual([...treeFiles(index, changes)].sort(), [['README.md', file('1')], ['new-tracked.ts', file('5', '100755')], ['src/a.ts', file('4')]]);
    const all = layerFiles({ index, changes, untracked: { paths, entries: [file('6'), big, undefined], rehashed: undefined } });
    assert.deepEqual([...all.keys()].sort(), ['README.md', 'new-tracked.ts', 'notes.txt', 'src/a.ts']);
    assert.equal(index.size, 3, 'the index itself is left as it was');
  });

  it('tell what changed between two checkpoints: tracked files changed, put back, removed; untracked ones hashed again', () => {
    const last = layers([['src/a.ts', file('4')], ['old.txt', undefined]], { paths, entries: [file('6'), big, file('7')], rehashed: undefined });
    const now = layers(
      [['old.txt', undefined], ['README.md', file('8', '100755')]],
      // Only notes.txt (0) and gone.tmp (2) were hashed again: video.mp4's entry is not looked at.
      { paths, entries: [file('6'), file('f'), undefined], rehashed: [0, 2] },
    );
    assert.deepEqual(
      [...changedSince(last, now)].sort(),
      [['README.md', file('8', '100755')], ['gone.tmp', undefined], ['src/a.ts', file('2')]],
    );
    const everything = layers([...now.changes], { paths, entries: now.untracked.entries, rehashed: undefined });
    assert.ok(changedSince(last, everything).has('video.mp4'), 'with no list of what was hashed again, every untracked file is compared');
  });

  it('compare a new list of untracked files by path', () => {
    const last = layers([], { paths, entries: [file('6'), big, file('7')], rehashed: undefined });
    const now = layers([], { paths: ['notes.txt', 'fresh.txt', 'video.mp4'], entries: [file('6'), file('a'), file('b')], rehashed: undefined });
    assert.deepEqual([...changedSince(last, now)].sort(), [['fresh.txt', file('a')], ['gone.tmp', undefined], ['video.mp4', file('b')]]);
    assert.equal(changedSince(last, last).size, 0);
  });

  it('list the untracked files left out, reusing the last list when none of the files hashed again is or was left out', () => {
    const lastList: UntrackedFiles = { paths, entries: [file('6'), big, file('7')], rehashed: undefined };
    const lastSkipped = skippedUntracked(lastList);
    assert.deepEqual(lastSkipped, [big]);
    const same: UntrackedFiles = { paths, entries: [file('c'), big, file('7')], rehashed: [0] };
    assert.equal(skippedUntracked(same, { untracked: lastList, skipped: lastSkipped }), lastSkipped);
    const bigger: SkippedFile = { ...big, size: 60_000_000 };
    const grown: UntrackedFiles = { paths, entries: [file('6'), bigger, file('7')], rehashed: [1] };
    assert.deepEqual(skippedUntracked(grown, { untracked: lastList, skipped: lastSkipped }), [bigger]);
    assert.deepEqual(skippedUntracked({ paths: [...paths], entries: [file('6'), file('d'), file('7')], rehashed: [1] }, { untracked: lastList, skipped: lastSkipped }), []);
  });
});
