// The witness (src/worktree/unchanged.ts) lets a checkpoint of a small, unchanged working tree skip
// `git status`. It must never hide a change: after each kind of change below, the next checkpoint
// is again exactly the tree git makes of the working tree. And when nothing changed (or only
// ignored files did), no git command runs at all.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { countGit, gitWorktreeTree, pastTick, snapshotterFor } from './support.js';

const scratch = useScratch();


describe('a checkpoint skips git status only when nothing git could see changed', () => {
  test('unchanged and ignored-only changes: no git command; every other change is seen', async () => {
    const repo = await scratch.repo({ '.gitignore': 'build/\n*.log\n', 'src/a.js': 'a\n', 'src/b.js': 'b\n', 'README.md': '# r\n' });
    mkdirSync(join(repo.root, 'empty/deeper'), { recursive: true });
    mkdirSync(join(repo.root, 'build'));
    writeFileSync(join(repo.root, 'untracked.txt'), 'u\n');
    const snapshotter = snapshotterFor(repo.root);
    let tree = snapshotter.snapshot().tree;
    await pastTick(repo.root);
    tree = snapshotter.snapshot().tree; // a full pass whose witness can be trusted

    const unchanged = countGit(() => snapshotter.snapshot());
    assert.equal(unchanged.spawns, 0, 'nothing changed: no git status');
    assert.equal(unchanged.value.tree, tree);

    writeFileSync(join(repo.root, 'build/out.js'), 'built\n');
    writeFileSync(join(repo.root, 'debug.log'), 'log\n');
    await pastTick(repo.root);
    const ignoredOnly = snapshotter.snapshot(); // the root directory changed (debug.log): a full pass
    assert.equal(ignoredOnly.tree, tree);
    await pastTick(repo.root);
    writeFileSync(join(repo.root, 'build/more.js'), 'more\n');
    assert.equal(countGit(() => snapshotter.snapshot()).spawns, 0, 'a change inside an ignored directory costs no git command');

    const changes: Array<[string, () => void | Promise<unknown>]> = [
      ['a tracked file edited, same size', () => writeFileSync(join(repo.root, 'src/a.js'), 'A\n')],
      ['an untracked file edited', () => writeFileSync(join(repo.root, 'untracked.txt'), 'U\n')],
      ['a file created in an empty directory, two levels down', () => writeFileSync(join(repo.root, 'empty/deeper/new.txt'), 'n\n')],
      ['a file created in a new directory', () => (mkdirSync(join(repo.root, 'fresh/dir'), { recursive: true }), writeFileSync(join(repo.root, 'fresh/dir/f.txt'), 'f\n'))],
      ['a tracked file deleted', () => rmSync(join(repo.root, 'src/b.js'))],
      ['a file renamed', () => renameSync(join(repo.root, 'untracked.txt'), join(repo.root, 'src/moved.txt'))],
      ['made executable', () => chmodSync(join(repo.root, 'src/a.js'), 0o755)],
      ['a directory replaced by a file of the same name', () => (rmSync(join(repo.root, 'fresh'), { recursive: true }), writeFileSync(join(repo.root, 'fresh'), 'now a file\n'))],
      ['.gitignore no longer ignores build/', () => writeFileSync(join(repo.root, '.gitignore'), '*.log\n')],
      ['.git/info/exclude now ignores src/', () => writeFileSync(join(repo.root, '.git/info/exclude'), 'src/\n')],
      ['git rm --cached (the index changed)', () => gitOut(repo.root, ['rm', '-q', '--cached', 'README.md'])],
    ];
    for (const [what, change] of changes) {
      await pastTick(repo.root);
      snapshotter.snapshot(); // the last change is older than a tick now: this witness holds
      assert.equal(countGit(() => snapshotter.snapshot()).spawns, 0, `before: ${what}`);
      await change();
      const after = snapshotter.snapshot();
      assert.equal(after.tree, await gitWorktreeTree(repo.root), what);
    }
  });

  test('a change in the same instant as the checkpoint is not vouched for', async () => {
    const repo = await scratch.repo({ 'a.txt': 'one\n' });
    const snapshotter = snapshotterFor(repo.root);
    writeFileSync(join(repo.root, 'a.txt'), 'two\n');
    snapshotter.snapshot(); // a.txt changed just now: this checkpoint's witness is void
    writeFileSync(join(repo.root, 'a.txt'), 'six\n'); // same size, maybe the same timestamp tick
    const next = countGit(() => snapshotter.snapshot());
    assert.ok(next.spawns > 0, 'git status ran again');
    assert.equal(next.value.tree, await gitWorktreeTree(repo.root));
  });
});
