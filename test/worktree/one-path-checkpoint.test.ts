// The checkpoint after an edit or a write: the tool names the one file it changed, and the
// checkpoint updates that path alone, with no `git status` of the tree. git is the judge: after
// each kind of change, the tree is the one `git add -A` + `git write-tree` makes of the same files.
// A step's checkpoint may leave its few new objects to the step's own commit (hold), which stores
// them in its pack.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findRepository } from '../../src/git/repository.js';
import { JournalStore } from '../../src/journal/store.js';
import { WorktreeSnapshotter } from '../../src/worktree/snapshot.js';
import { assertFsckClean } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { countGit, gitWorktreeTree, snapshotterFor } from './support.js';

const scratch = useScratch();

async function repoWithFiles() {
  const repo = await scratch.repo({ 'README.md': '# r\n', 'src/a.js': 'a\n', 'src/b.js': 'b\n', '.gitignore': 'build/\n' });
  writeFileSync(join(repo.root, 'notes.txt'), 'untracked\n');
  return repo;
}

describe('a checkpoint of the paths a step changed', () => {
  test('an edited tracked file, a rewritten untracked one and a new file in a new directory each give the tree git makes, with no git command', async () => {
    const repo = await repoWithFiles();
    const root = repo.root;
    const snapshotter = snapshotterFor(root);
    snapshotter.snapshot();
    const cases: Array<[string, string]> = [
      ['src/a.js', 'a changed\n'],
      ['notes.txt', 'untracked, rewritten\n'],
      ['lib/deep/new.js', 'new\n'],
      ['src/a.js', 'a again\n'],
    ];
    for (const [path, content] of cases) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), content);
      const { value, spawns } = countGit(() => snapshotter.snapshotPaths([path]));
      assert.equal(spawns, path === 'lib/deep/new.js' ? 1 : 0, `${path}: only a new untracked file is asked about (is it ignored?)`);
      assert.equal(value.tree, await gitWorktreeTree(root), `${path}: the tree git makes`);
    }
    // The next full checkpoint agrees with the one-path ones.
    const full = snapshotter.snapshot();
    assert.equal(full.tree, await gitWorktreeTree(root));
  });

  test('a write to an ignored path leaves the checkpoint as it was', async () => {
    const repo = await repoWithFiles();
    const root = repo.root;
    const snapshotter = snapshotterFor(root);
    const before = snapshotter.snapshot().tree;
    mkdirSync(join(root, 'build'));
    writeFileSync(join(root, 'build/out.js'), 'built\n');
    assert.equal(snapshotter.snapshotPaths(['build/out.js']).tree, before);
    assert.equal(before, await gitWorktreeTree(root));
  });

  test('with no checkpoint to build on, or a changed index, it takes a full one', async () => {
    const repo = await repoWithFiles();
    const root = repo.root;
    const fresh = snapshotterFor(root);
    writeFileSync(join(root, 'src/b.js'), 'b changed\n');
    writeFileSync(join(root, 'other.txt'), 'other\n');
    assert.equal(fresh.snapshotPaths(['src/b.js']).tree, await gitWorktreeTree(root), 'no last checkpoint: the whole tree, other.txt included');
    await repo.git('add', 'other.txt');
    writeFileSync(join(root, 'src/a.js'), 'a changed\n');
    const { value, spawns } = countGit(() => fresh.snapshotPaths(['src/a.js']));
    assert.ok(spawns > 0, 'the index changed: git status ran');
    assert.equal(value.tree, await gitWorktreeTree(root));
  });
});

describe('the first checkpoint of a fresh clone', () => {
  test('writes no object the clone already has in its pack, and runs git twice: every tree of a clean checkout is there', async () => {
    const source = await scratch.repo({ 'README.md': '# r\n', 'a/b/c.txt': 'c\n', 'a/d.txt': 'd\n', 'e/f/g/h.txt': 'h\n' });
    const clone = await scratch.dir();
    execFileSync('git', ['clone', '-q', '--no-local', source.root, clone]);
    const loose = () => readdirSync(join(clone, '.git/objects')).filter((name) => /^[0-9a-f]{2}$/.test(name)).flatMap((dir) => readdirSync(join(clone, '.git/objects', dir)));
    assert.deepEqual(loose(), [], 'the clone holds its objects in a pack');
    const snapshotter = snapshotterFor(clone);
    const { value: snapshot, spawns } = countGit(() => snapshotter.snapshot());
    assert.equal(spawns, 2, 'git ls-files and git status, nothing more (no config read: there is no file to hash)');
    assert.equal(snapshot.tree, execFileSync('git', ['rev-parse', 'HEAD^{tree}'], { cwd: clone, encoding: 'utf8' }).trim());
    assert.deepEqual(loose(), [], 'no object was written again as a loose file');
    assert.equal(snapshot.files.get('e/f/g/h.txt')?.oid, execFileSync('git', ['rev-parse', 'HEAD:e/f/g/h.txt'], { cwd: clone, encoding: 'utf8' }).trim());
    // A change then writes only what is new: the blob and the trees on its path (HEAD's trees of
    // the directories beside it are read back, by this snapshotter and by a new one).
    writeFileSync(join(clone, 'a/b/c.txt'), 'changed\n');
    const changed = snapshotter.snapshot();
    assert.equal(loose().length, 4, 'the new blob, and the trees of a/b, a and the root');
    assert.equal(snapshotterFor(clone).snapshot().tree, changed.tree);
    writeFileSync(join(clone, 'e/f/new.txt'), 'new\n');
    rmSync(join(clone, 'a/d.txt'));
    const more = snapshotter.snapshotPaths(['e/f/new.txt', 'a/d.txt']);
    assert.equal(more.tree, snapshotter.snapshot().tree);
    assert.equal(more.tree, await gitWorktreeTree(clone));
    assert.equal(changed.tree, execFileSync('git', ['rev-parse', `${changed.tree}^{tree}`], { cwd: clone, encoding: 'utf8' }).trim());
  });
});

describe('a checkout that is HEAD\'s, with a HEAD tree git would not write', () => {
  test('gets the tree git makes of the files, not HEAD\'s (a zero-padded mode, as some old tools wrote)', async () => {
    const repo = await scratch.repo({ 'a/x.txt': 'x\n', 'b.txt': 'b\n' });
    const { root } = repo;
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: root, encoding: 'utf8', input }).trim();
    const sub = git(['rev-parse', 'HEAD:a']);
    const blob = git(['rev-parse', 'HEAD:b.txt']);
    // The root tree by hand: "040000 a" (git writes "40000"), then a commit of it checked out.
    const body = Buffer.concat([Buffer.from('040000 a\0'), Buffer.from(sub, 'hex'), Buffer.from('100644 b.txt\0'), Buffer.from(blob, 'hex')]);
    const odd = execFileSync('git', ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], { cwd: root, input: body, encoding: 'utf8' }).trim();
    const commit = git(['commit-tree', odd, '-m', 'an old tool\'s tree']);
    git(['reset', '-q', '--hard', commit]);
    assert.equal(git(['status', '--porcelain']), '', 'the checkout is HEAD\'s');
    const snapshot = snapshotterFor(root).snapshot();
    assert.notEqual(snapshot.tree, odd);
    // git's own tree of the files from an empty index: a copy of this one may still hold HEAD's
    // tree in its cache and give it back as it is.
    const env = { ...process.env, GIT_INDEX_FILE: join(root, '.git', 'judge-index') };
    execFileSync('git', ['add', '-A'], { cwd: root, env });
    assert.equal(snapshot.tree, execFileSync('git', ['write-tree'], { cwd: root, env, encoding: 'utf8' }).trim());
  });
});

describe("a step's checkpoint stored with the step's commit", () => {
  test('held objects are read back before the append, go into its pack (no loose file), and are stored by any other write that comes first', async () => {
    const repo = await scratch.repo({ 'src/a.js': 'a\n', 'src/deep/b.js': 'b\n' });
    const { root } = repo;
    const store = await JournalStore.open(root);
    const snapshotter = new WorktreeSnapshotter(findRepository(root), store.objects);
    snapshotter.snapshot();
    const loose = () => readdirSync(join(root, '.git/objects')).filter((name) => /^[0-9a-f]{2}$/.test(name)).flatMap((dir) => readdirSync(join(root, '.git/objects', dir)).map((file) => dir + file));
    const before = loose();
    writeFileSync(join(root, 'src/deep/b.js'), 'b changed by a command\n');
    const held = snapshotter.snapshot({ hold: true });
    assert.deepEqual(loose(), before, 'nothing written yet');
    const blob = held.files.get('src/deep/b.js')!.oid;
    assert.equal((await store.objects.read(blob, 'blob')).toString(), 'b changed by a command\n', 'read back from memory');
    await store.append([{ path: 'runs/r/worktree', tree: held.tree }], 'a step and its checkpoint');
    assert.deepEqual(loose(), before, 'the blob and its three trees are in the append pack');
    assert.equal(execFileSync('git', ['cat-file', 'blob', blob], { cwd: root, encoding: 'utf8' }), 'b changed by a command\n');
    await assertFsckClean(root);
    assert.equal(held.tree, await gitWorktreeTree(root)); // (git's own add writes loose objects)

    // Held, then another checkpoint that is not (a resume's drift check): that write stores both.
    writeFileSync(join(root, 'src/a.js'), 'a, held\n');
    const second = snapshotter.snapshotPaths(['src/a.js'], { hold: true });
    writeFileSync(join(root, 'src/deep/b.js'), 'b, written at once\n');
    const third = snapshotter.snapshot();
    for (const tree of [second.tree, third.tree]) assert.equal(execFileSync('git', ['cat-file', '-t', tree], { cwd: root, encoding: 'utf8' }).trim(), 'tree');
    assert.equal(execFileSync('git', ['cat-file', 'blob', `${second.tree}:src/a.js`], { cwd: root, encoding: 'utf8' }), 'a, held\n');
  });
});
