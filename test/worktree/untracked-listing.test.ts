// Listing untracked files directory by directory (src/worktree/untracked-listing.ts): a big working
// tree's checkpoint asks git again only about directories whose stat changed. It must never miss a
// change: after every kind of change below (inside unchanged directories, in new and empty ones,
// renames, deletions, ignore rules, the index, changes within the same timestamp tick), the
// checkpoint is exactly the tree git makes of the working tree. The listing is forced on small
// trees here (`untrackedListingFrom: 0`); one test crosses the real threshold.
import '../helpers/on-disk.js'; // the file system's own stat behaviour is the subject
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import mutableFs from 'node:fs';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { POOL_FROM } from '../../src/worktree/file-hasher.js';
import { UNTRACKED_LISTING_FROM } from '../../src/worktree/untracked-listing.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { countGit, gitWorktreeTree, lsTree, pastTick, prng, snapshotterFor } from './support.js';

const scratch = useScratch();

const listing = { untrackedListingFrom: 0 };

// Writes a file, making its directories; whatever stands in the way (a file where a directory
// goes, a directory where the file goes) is removed first.
function write(root: string, path: string, content: string): void {
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const at = join(root, ...parts.slice(0, i));
    const stat = fs.lstatSync(at, { throwIfNoEntry: false });
    if (stat && (i < parts.length ? !stat.isDirectory() : stat.isDirectory())) rmSync(at, { recursive: true });
  }
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

function isFile(path: string): boolean {
  try {
    return fs.lstatSync(path).isFile();
  } catch {
    return false;
  }
}

describe('untracked files listed directory by directory', () => {
  test('every kind of change gives git\'s tree; an edit of an untracked file in an unchanged directory costs no git command', async () => {
    const repo = await scratch.repo({ '.gitignore': 'build/\n*.log\n', 'src/a.js': 'a\n', 'README.md': '# r\n' });
    const root = repo.root;
    for (const path of ['u/one.txt', 'u/two.txt', 'u/deep/three.txt', 'v/four.txt', 'logs/old.log', 'build/out.js', 'top.txt']) write(root, path, `${path}\n`);
    mkdirSync(join(root, 'empty/deeper'), { recursive: true });
    const excludes = join(scratch.dir('savepoint-excludes-'), 'ignore');
    const snapshotter = snapshotterFor(root, listing);
    snapshotter.snapshot();
    await pastTick(root);
    snapshotter.snapshot(); // every directory is older than a tick now: all of them are trusted

    const edit = countGit(() => (writeFileSync(join(root, 'u/deep/three.txt'), 'edited in place\n'), snapshotter.snapshot()));
    assert.equal(edit.spawns, 0, 'an untracked file edited in an unchanged directory: no git command (the tracked files are as git last saw them)');
    assert.equal(edit.value.tree, await gitWorktreeTree(root));
    await pastTick(root);
    const ignored = countGit(() => (write(root, 'build/more/x.js', 'x\n'), snapshotter.snapshot()));
    assert.equal(ignored.spawns, 0, 'a change inside an ignored directory lists nothing again');
    assert.equal(ignored.value.tree, edit.value.tree);
    const tracked = countGit(() => (writeFileSync(join(root, 'src/a.js'), 'B\n'), snapshotter.snapshot()));
    assert.equal(tracked.spawns, 1, 'a tracked file edited in an unchanged directory: git status of the tracked files');
    assert.equal(tracked.value.tree, await gitWorktreeTree(root));
    await pastTick(root);
    snapshotter.snapshot();
    const past = new Date(Date.now() - 60_000);
    const sameStat = countGit(() => (writeFileSync(join(root, 'src/a.js'), 'C\n'), fs.utimesSync(join(root, 'src/a.js'), past, past), snapshotter.snapshot()));
    assert.equal(sameStat.spawns, 1, 'the same size, and the mtime set back: its ctime moved all the same');
    assert.equal(sameStat.value.tree, await gitWorktreeTree(root));

    const changes: Array<[string, () => unknown]> = [
      ['an untracked file rewritten, same size', () => writeFileSync(join(root, 'u/one.txt'), 'U/ONE.TXT\n')],
      ['a tracked file edited', () => writeFileSync(join(root, 'src/a.js'), 'A\n')],
      ['a file created in an existing directory', () => write(root, 'v/five.txt', '5\n')],
      ['a file created in a new directory, three levels down', () => write(root, 'v/new/er/est/six.txt', '6\n')],
      ['a file created in an empty directory, two levels down', () => write(root, 'empty/deeper/seven.txt', '7\n')],
      ['a file created in a directory of ignored files only', () => write(root, 'logs/eight.txt', '8\n')],
      ['an empty directory created, then a file in it', () => mkdirSync(join(root, 'later'))],
      ['... the file', () => write(root, 'later/nine.txt', '9\n')],
      ['an untracked file deleted', () => rmSync(join(root, 'u/two.txt'))],
      ['a file renamed in its directory', () => renameSync(join(root, 'u/one.txt'), join(root, 'u/uno.txt'))],
      ['a file moved to another directory', () => renameSync(join(root, 'v/five.txt'), join(root, 'u/deep/five.txt'))],
      ['a directory renamed', () => renameSync(join(root, 'u/deep'), join(root, 'u/shallow'))],
      ['a directory removed with its files', () => rmSync(join(root, 'v'), { recursive: true })],
      ['a file replaced by a directory of the same name', () => (rmSync(join(root, 'top.txt')), write(root, 'top.txt/inside.txt', 'in\n'))],
      ['made executable', () => chmodSync(join(root, 'u/uno.txt'), 0o755)],
      ['.gitignore edited in place: now ignores u/', () => writeFileSync(join(root, '.gitignore'), 'build/\n*.log\nu/\n')],
      ['a .gitignore created in a subdirectory', () => write(root, 'later/.gitignore', '*.txt\n')],
      ['.git/info/exclude now ignores empty/', () => writeFileSync(join(root, '.git/info/exclude'), 'empty/\n')],
      ['.gitignore no longer ignores u/ (nor build/)', () => writeFileSync(join(root, '.gitignore'), '*.log\n')],
      ['core.excludesFile names a file outside the repository', async () => (writeFileSync(excludes, '# nothing yet\n'), await gitOut(root, ['config', 'core.excludesFile', excludes]))],
      ['that file edited in place: now ignores later/', () => writeFileSync(excludes, 'later/\n')],
      ['git add -A (the index changed)', () => gitOut(root, ['add', '-A'])],
      ['a file staged, then edited', () => writeFileSync(join(root, 'u/uno.txt'), 'staged, then edited\n')],
      ['git commit, then a new untracked file', async () => (await gitOut(root, ['commit', '-q', '-m', 'c']), write(root, 'u/after-commit.txt', 'c\n'))],
      ['a tracked file edited, then the same again in the same tick', () => (writeFileSync(join(root, 'src/a.js'), 'D\n'), snapshotter.snapshot(), writeFileSync(join(root, 'src/a.js'), 'E\n'))],
      ['HEAD moved back (git reset --soft): the files are staged now', () => gitOut(root, ['reset', '-q', '--soft', 'HEAD~'])],
      ['a tracked file deleted', () => rmSync(join(root, 'src/a.js'))],
    ];
    for (const [what, change] of changes) {
      await pastTick(root);
      snapshotter.snapshot();
      await change();
      assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(root), what);
    }
  });

  test('changes within the same timestamp tick as the listing are seen by the next checkpoint', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const snapshotter = snapshotterFor(repo.root, listing);
    for (let i = 0; i < 12; i++) {
      // No pause: each directory changed within the tick of the last listing, again and again.
      write(repo.root, `d/f${i}.txt`, `${i}\n`);
      if (i % 3 === 0) write(repo.root, `d/n${i}/g.txt`, 'new dir\n');
      if (i % 4 === 1) rmSync(join(repo.root, `d/f${i - 1}.txt`));
      writeFileSync(join(repo.root, 'd/same.txt'), `v${i % 10}\n`); // same size every time
      assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(repo.root), `round ${i}`);
    }
  });

  test('any sequence of changes gives git\'s tree, with pauses and without', async () => {
    const repo = await scratch.repo({ '.gitignore': '*.tmp\nign/\n', 'keep.txt': 'keep\n', 'src/a.js': 'a\n' });
    const random = prng(20261201);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    const dirs = ['', 'src', 'src/deep', 'src/deep/er', 'lib', 'lib/x', 'ign', 'ign/sub'];
    const files = async () => (await repo.git('ls-files', '-co', '--exclude-standard')).split('\n').filter((path) => path && isFile(join(repo.root, path)));
    const kept = snapshotterFor(repo.root, listing);
    const log: string[] = [];
    for (let step = 0; step < 60; step++) {
      if (random() < 0.4) await pastTick(repo.root);
      const existing = await files();
      const op = Math.floor(random() * 10);
      const dir = pick(dirs);
      const path = `${dir ? `${dir}/` : ''}f${Math.floor(random() * 5)}.txt`;
      if (op <= 2 || existing.length === 0) {
        write(repo.root, path, `content ${step} ${random()}\n`);
        log.push(`write ${path}`);
      } else if (op === 3) {
        const victim = pick(existing);
        rmSync(join(repo.root, victim));
        log.push(`rm ${victim}`);
      } else if (op === 4) {
        const victim = pick(dirs.filter(Boolean));
        rmSync(join(repo.root, victim), { recursive: true, force: true });
        log.push(`rm -r ${victim}`);
      } else if (op === 5) {
        const from = pick(existing);
        if (!fs.existsSync(join(repo.root, path)) && !isFile(join(repo.root, path, '..'))) {
          mkdirSync(join(repo.root, path, '..'), { recursive: true });
          renameSync(join(repo.root, from), join(repo.root, path));
          log.push(`mv ${from} ${path}`);
        }
      } else if (op === 6) {
        await repo.git('add', '-A');
        if (random() < 0.5) await repo.git('commit', '-q', '--allow-empty', '-m', `step ${step}`);
        log.push('git add -A (and commit)');
      } else if (op === 7) {
        write(repo.root, `${dir ? `${dir}/` : ''}scratch.tmp`, 'ignored\n');
        log.push('write an ignored file');
      } else if (op === 8) {
        const victim = pick(existing);
        write(repo.root, `${victim}/inside.txt`, `was a file ${step}\n`);
        log.push(`file -> dir ${victim}`);
      } else {
        const target = pick(existing);
        writeFileSync(join(repo.root, target), `${readFileSync(join(repo.root, target), 'utf8')}more ${step}\n`);
        log.push(`append ${target}`);
      }
      const expected = await gitWorktreeTree(repo.root);
      assert.equal(kept.snapshot().tree, expected, `the listing snapshotter after: ${log.join('; ')}`);
      assert.equal(snapshotterFor(repo.root).snapshot().tree, expected, `a fresh snapshotter after: ${log.join('; ')}`);
    }
  });

  test('a nested repository and a submodule stay out of the listing; an edit inside the submodule is recorded', async () => {
    const lib = await scratch.repo({ 'lib.js': 'v = 1\n' });
    const app = await scratch.repo({ 'app.js': 'app\n' });
    await gitOut(app.root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.root, 'vendor/lib']);
    await gitOut(app.root, ['commit', '-q', '-m', 'add submodule']);
    write(app.root, 'untracked/a.txt', 'a\n');
    mkdirSync(join(app.root, 'nested'));
    await gitOut(join(app.root, 'nested'), ['init', '-q']);
    write(app.root, 'nested/inner.txt', 'inner\n');
    const snapshotter = snapshotterFor(app.root, listing);
    const names = async () => [...(await lsTree(app.root, snapshotter.snapshot().tree)).keys()].sort();
    assert.deepEqual(await names(), ['.gitmodules', 'app.js', 'untracked/a.txt', 'vendor/lib/lib.js']);
    await pastTick(app.root);
    await names();
    write(app.root, 'vendor/lib/added.txt', 'new in the submodule\n');
    writeFileSync(join(app.root, 'vendor/lib/lib.js'), 'v = 2\n');
    write(app.root, 'nested/more.txt', 'more\n');
    write(app.root, 'untracked/b.txt', 'b\n');
    assert.deepEqual(await names(), ['.gitmodules', 'app.js', 'untracked/a.txt', 'untracked/b.txt', 'vendor/lib/added.txt', 'vendor/lib/lib.js']);
    assert.equal(await gitOut(app.root, ['cat-file', 'blob', `${snapshotter.snapshot().tree}:vendor/lib/lib.js`]), 'v = 2');
    await pastTick(app.root);
    rmSync(join(app.root, 'nested/.git'), { recursive: true });
    assert.deepEqual(await names(), ['.gitmodules', 'app.js', 'nested/inner.txt', 'nested/more.txt', 'untracked/a.txt', 'untracked/b.txt', 'vendor/lib/added.txt', 'vendor/lib/lib.js']);
  });

  test(`past ${UNTRACKED_LISTING_FROM} untracked files the listing is on by itself (past ${POOL_FROM}, on two threads), and never reads an ignored directory`, async () => {
    const repo = await scratch.repo({ '.gitignore': 'node_modules/\n', 'README.md': '# r\n' });
    for (let i = 0; i < Math.max(UNTRACKED_LISTING_FROM, POOL_FROM); i++) write(repo.root, `vendor/p${Math.floor(i / 100)}/f${i}.js`, `${i}\n`);
    for (let i = 0; i < 200; i++) write(repo.root, `node_modules/m${i % 20}/f${i}.js`, `${i}\n`);
    const snapshotter = snapshotterFor(repo.root);
    const read: string[] = [];
    const original = mutableFs.readdirSync;
    mutableFs.readdirSync = ((path: fs.PathLike, ...rest: unknown[]) => {
      read.push(String(path));
      return (original as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.readdirSync;
    syncBuiltinESMExports();
    try {
      snapshotter.snapshot();
      await pastTick(repo.root);
      snapshotter.snapshot();
      write(repo.root, 'vendor/p1/f150.js', 'edited\n');
      write(repo.root, 'node_modules/m1/new.js', 'new\n');
      const edit = countGit(() => snapshotter.snapshot());
      assert.equal(edit.spawns, 0, 'no directory git walks changed, nor any tracked file');
      assert.equal(edit.value.tree, await gitWorktreeTree(repo.root));
      write(repo.root, 'vendor/p3/new.js', 'new\n');
      rmSync(join(repo.root, 'vendor/p7'), { recursive: true });
      writeFileSync(join(repo.root, 'vendor/p9/f950.js'), 'same size\n');
      assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(repo.root));
      writeFileSync(join(repo.root, 'vendor/p9/f950.js'), 'SAME SIZE\n'); // within the same tick
      assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(repo.root));
    } finally {
      mutableFs.readdirSync = original;
      syncBuiltinESMExports();
    }
    assert.ok(read.length > 0, 'the listing walked the directories');
    assert.deepEqual(read.filter((path) => path.includes('node_modules')), [], 'and never the ignored one');
  });
});
