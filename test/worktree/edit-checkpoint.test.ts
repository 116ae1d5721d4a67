// The checkpoint after an edit in a big working tree (thousands of untracked files, past the
// thresholds where they are listed by directory and their stats checked on two threads, against
// the stats they had when hashed): an edit that leaves its directory's stat as it was must still be
// recorded, whatever it keeps of the file's stat (size, mtime), and in the same timestamp tick as
// the last checkpoint too; a new list of files (a file created) while another is edited carries over
// what the last check found; from the repository's root (paths lstat()ed relative to it) the same.
// git is the judge of every tree.
import '../helpers/on-disk.js'; // the file system's own stat behaviour is the subject
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { POOL_FROM } from '../../src/worktree/file-hasher.js';
import { useScratch } from '../helpers/scratch.js';
import { countGit, fileInTree, gitWorktreeTree, pastTick, snapshotterFor } from './support.js';

const scratch = useScratch();

// A repository with one tracked file and POOL_FROM + 500 untracked ones, 100 to a directory.
async function bigRepo(): Promise<{ root: string; paths: string[] }> {
  const repo = await scratch.repo({ 'README.md': '# r\n' });
  const paths: string[] = [];
  for (let i = 0; i < POOL_FROM + 500; i++) {
    const dir = `vendor/p${Math.floor(i / 100)}`;
    if (i % 100 === 0) mkdirSync(join(repo.root, dir), { recursive: true });
    paths.push(`${dir}/f${i}.js`);
    writeFileSync(join(repo.root, paths[i]!), `module.exports = ${i};\n`);
  }
  return { root: repo.root, paths };
}

// A snapshotter past its first checkpoints: its stat cache and the pool's list are in use.
async function warm(root: string) {
  const snapshotter = snapshotterFor(root);
  snapshotter.snapshot();
  await pastTick(root);
  snapshotter.snapshot();
  snapshotter.snapshot();
  return snapshotter;
}

async function edits(root: string, paths: string[]): Promise<void> {
  const file = (i: number) => join(root, paths[i]!);
  // A whole-millisecond mtime (not a whole second), which utimes can put back exactly.
  const past = new Date(Date.now() - 60_000 - (Date.now() % 1000 === 0 ? 1 : 0));
  utimesSync(file(1234), past, past);
  const snapshotter = await warm(root);

  // In place, same size, mtime put back: only the ctime moved, and no directory did.
  const { mtimeMs, size } = lstatSync(file(1234));
  writeFileSync(file(1234), 'module.exports = "x";\n'.slice(0, size).padEnd(size, ' '));
  utimesSync(file(1234), past, past);
  assert.equal(lstatSync(file(1234)).mtimeMs, mtimeMs, 'the mtime is put back exactly');
  assert.equal(lstatSync(file(1234)).size, size);
  const edited = countGit(() => snapshotter.snapshot());
  assert.equal(edited.spawns, 0, 'no git command for an untracked file edited in an unchanged directory');
  assert.equal(edited.value.tree, await gitWorktreeTree(root), 'the same size, the same mtime: recorded');

  // Twice within one tick: the second has the size and (nearly) the time of the first.
  for (let round = 0; round < 3; round++) {
    writeFileSync(file(77), `module.exports = ${round}1;\n`);
    assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root), `round ${round}: the first edit`);
    writeFileSync(file(77), `module.exports = ${round}2;\n`);
    const again = snapshotter.snapshot();
    assert.equal(again.tree, await gitWorktreeTree(root), `round ${round}: the second, in the same tick`);
    assert.equal(await fileInTree(root, again.tree, paths[77]!), `module.exports = ${round}2;`);
  }

  // A new file in one directory (the list of files changes) and an edit in another.
  await pastTick(root);
  snapshotter.snapshot();
  writeFileSync(join(root, 'vendor/p3/new.js'), 'new\n');
  writeFileSync(file(4321), 'edited beside a new list\n');
  assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root), 'a created file and an edit elsewhere');
  writeFileSync(file(4322), 'edited in the new list\n');
  assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root), 'then an edit with the new list');
  rmSync(file(10));
  writeFileSync(file(11), 'beside a deletion\n');
  assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root), 'a deleted file and an edit beside it');

  // Nothing changed: the same tree, and nothing hashed again.
  const tree = snapshotter.snapshot().tree;
  assert.equal(snapshotter.snapshot().tree, tree);
}

describe('a checkpoint after an edit among thousands of untracked files', () => {
  test('records every edit, from outside the repository', async () => {
    const { root, paths } = await bigRepo();
    await edits(root, paths);
  });

  test('records every edit from the repository\'s root (paths relative to it), and after leaving it', async () => {
    const { root, paths } = await bigRepo();
    const home = process.cwd();
    try {
      process.chdir(root);
      await edits(root, paths);
      const snapshotter = await warm(root);
      process.chdir(home);
      writeFileSync(join(root, paths[99]!), 'edited after leaving the root\n');
      assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root));
    } finally {
      process.chdir(home);
    }
  });
});
