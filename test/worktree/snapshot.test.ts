// Working-tree checkpoints on real repositories: the tree a snapshot records must be exactly the
// tree git makes of the working tree (`git add -A` + `git write-tree` in a scratch index), after any
// sequence of changes, from a snapshotter that has seen earlier states (caches) or none; the user's
// HEAD, index and files are never touched; big files and binary files are handled on purpose.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import mutableFs from 'node:fs';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';
import { gitOut, userState } from '../helpers/git.js';
import { cloneOf, fileInTree, gitWorktreeTree, lsTree, objectsFor, prng, snapshotterFor } from './support.js';
import { restoreWorktree } from '../../src/worktree/restore.js';

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.remove();
});

// A clone of `repo` (a fresh checkout of its HEAD) that also holds the objects of `tree`.
async function cloneWithTree(repo: TempRepo, tree: string): Promise<TempRepo> {
  const clone = await cloneOf(repo.root, tree);
  repos.push(clone);
  return clone;
}

async function repoWith(files: Record<string, string>, commit = true): Promise<TempRepo> {
  const repo = await createTempRepo({ files, commit });
  repos.push(repo);
  return repo;
}

describe('a checkpoint is the tree git makes of the working tree', { concurrency: true }, () => {
  test('tracked, modified, deleted, staged, untracked, ignored, executable, symlinked and oddly named files', async () => {
    const repo = await repoWith({
      '.gitignore': '*.log\nbuild/\n',
      'README.md': '# project\n',
      'src/app.js': 'console.log("app");\n',
      'src/lib/util.js': 'export const x = 1;\n',
      'src/lib/gone.js': 'to be deleted\n',
      'docs/guide.md': 'guide\n',
    });
    repo.write('src/app.js', 'console.log("changed");\n');
    unlinkSync(join(repo.root, 'src/lib/gone.js'));
    repo.write('notes/new file with spaces.txt', 'untracked\n');
    repo.write('notes/é-ü.txt', 'unicode name\n');
    repo.write('debug.log', 'ignored\n');
    repo.write('build/out.js', 'ignored too\n');
    repo.write('bin/run.sh', '#!/bin/sh\necho hi\n');
    chmodSync(join(repo.root, 'bin/run.sh'), 0o755);
    symlinkSync('../README.md', join(repo.root, 'docs/readme-link.md'));
    repo.write('staged.txt', 'staged by the user\n');
    await repo.git('add', 'staged.txt');
    const before = await userState(repo.root);
    const indexBytes = readFileSync(join(repo.root, '.git/index'));

    const snap = snapshotterFor(repo.root).snapshot();

    assert.equal(snap.tree, await gitWorktreeTree(repo.root));
    const files = await lsTree(repo.root, snap.tree);
    assert.ok(files.get('bin/run.sh')?.startsWith('100755 '), 'the executable bit is recorded');
    assert.ok(files.get('docs/readme-link.md')?.startsWith('120000 '), 'a symlink is recorded as a link');
    assert.ok(files.has('notes/new file with spaces.txt') && files.has('notes/é-ü.txt'));
    assert.ok(!files.has('debug.log') && !files.has('build/out.js'), 'ignored files are not recorded');
    assert.ok(!files.has('src/lib/gone.js'), 'a deleted tracked file is not in the checkpoint');
    assert.equal(await fileInTree(repo.root, snap.tree, 'src/app.js'), 'console.log("changed");');
    assert.deepEqual(snap.skipped, []);
    // The snapshot's own file list agrees with the tree.
    assert.deepEqual(
      new Map([...snap.files].map(([path, e]) => [path, `${e.mode} ${e.oid}`])),
      files,
    );

    assert.deepEqual(await userState(repo.root), before, "the user's HEAD, index and status are untouched");
    assert.ok(readFileSync(join(repo.root, '.git/index')).equals(indexBytes), 'the index file is not rewritten');
  });

  test('a repository with no commit and no index yet, and an empty working tree', async () => {
    const repo = await repoWith({}, false);
    const empty = snapshotterFor(repo.root).snapshot();
    assert.equal(empty.tree, '4b825dc642cb6eb9a060e54bf8d69288fbee4904', 'the empty tree');
    repo.write('a/b/c.txt', 'deep\n');
    assert.equal(snapshotterFor(repo.root).snapshot().tree, await gitWorktreeTree(repo.root));
  });

  test('a nested repository is not recorded as files, and does not stop the checkpoint', async () => {
    const repo = await repoWith({ 'top.txt': 'top\n' });
    const nested = join(repo.root, 'vendor/other');
    mkdirSync(nested, { recursive: true });
    await gitOut(nested, ['init', '-q']);
    writeFileSync(join(nested, 'inner.txt'), 'inner\n');
    const snap = snapshotterFor(repo.root).snapshot();
    const files = await lsTree(repo.root, snap.tree);
    assert.deepEqual([...files.keys()].sort(), ['top.txt']);
  });

  test('any sequence of changes gives git\'s tree, from a snapshotter with caches and from a fresh one', async () => {
    const repo = await repoWith({ '.gitignore': '*.tmp\n', 'keep.txt': 'keep\n', 'src/a.js': 'a\n', 'src/deep/b.js': 'b\n' });
    const random = prng(20240611);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    const dirs = ['', 'src', 'src/deep', 'src/deep/er', 'lib', 'lib/x'];
    const list = () => Object.keys(worktree(repo.root));
    const kept = snapshotterFor(repo.root);
    const log: string[] = [];
    for (let step = 0; step < 40; step++) {
      const files = list();
      const op = Math.floor(random() * 11);
      const name = `f${Math.floor(random() * 6)}.txt`;
      const dir = pick(dirs);
      const path = dir ? `${dir}/${name}` : name;
      if (op <= 2 || files.length === 0) {
        repo.write(path, `content ${step} ${random()}\n`);
        log.push(`write ${path}`);
      } else if (op === 3) {
        const victim = pick(files);
        rmSync(join(repo.root, victim));
        log.push(`rm ${victim}`);
      } else if (op === 4) {
        const victim = pick(dirs.filter(Boolean));
        rmSync(join(repo.root, victim), { recursive: true, force: true });
        log.push(`rm -r ${victim}`);
      } else if (op === 5) {
        await repo.git('add', '-A');
        log.push('git add -A');
      } else if (op === 6) {
        await repo.git('add', '-A');
        await repo.git('commit', '-q', '--allow-empty', '-m', `step ${step}`);
        log.push('git commit');
      } else if (op === 7) {
        const target = pick(files);
        chmodSync(join(repo.root, target), statSync(join(repo.root, target)).mode & 0o100 ? 0o644 : 0o755);
        log.push(`chmod ${target}`);
      } else if (op === 8) {
        repo.write(`${dir ? `${dir}/` : ''}scratch.tmp`, 'ignored\n');
        log.push('write an ignored file');
      } else if (op === 9) {
        // A file becomes a directory of the same name (and the other way round next time).
        const victim = pick(files);
        rmSync(join(repo.root, victim), { recursive: true, force: true });
        repo.write(`${victim}/inside.txt`, `was a file ${step}\n`);
        log.push(`file -> dir ${victim}`);
      } else {
        const target = pick(files);
        repo.write(target, `${readFileSync(join(repo.root, target), 'utf8')}more ${step}\n`);
        log.push(`append ${target}`);
      }
      const expected = await gitWorktreeTree(repo.root);
      assert.equal(kept.snapshot().tree, expected, `the long-lived snapshotter after: ${log.join('; ')}`);
      assert.equal(snapshotterFor(repo.root).snapshot().tree, expected, `a fresh snapshotter after: ${log.join('; ')}`);
    }
  });

  test('a file rewritten with the same size within the same second is hashed again (no stale cache)', async () => {
    const repo = await repoWith({ 'base.txt': 'base\n' });
    const snapshotter = snapshotterFor(repo.root);
    for (const content of ['aaaa\n', 'bbbb\n', 'cccc\n']) {
      repo.write('scratch.txt', content);
      const snap = snapshotter.snapshot();
      assert.equal(await fileInTree(repo.root, snap.tree, 'scratch.txt'), content.trimEnd());
      repo.write('base.txt', content.toUpperCase());
      assert.equal(await fileInTree(repo.root, snapshotter.snapshot().tree, 'base.txt'), content.toUpperCase().trimEnd());
    }
  });
});

describe('the stat cache: an unchanged file is not read again', () => {
  test('after the first checkpoint, only the file that changed is read', async () => {
    const repo = await repoWith({ 'tracked.txt': 'tracked\n' });
    for (let i = 0; i < 20; i++) repo.write(`untracked/u${i}.txt`, `untracked ${i}\n`);
    // Older than the cache's 2-second same-tick guard, as files are that nobody is writing to.
    const past = new Date(Date.now() - 60_000);
    for (let i = 0; i < 20; i++) fs.utimesSync(join(repo.root, `untracked/u${i}.txt`), past, past);
    const snapshotter = snapshotterFor(repo.root);
    const first = snapshotter.snapshot();

    const reads: string[] = [];
    const original = mutableFs.readFileSync;
    // The snapshotter imports readFileSync by name: patch the builtin and sync its ESM exports.
    mutableFs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      if (typeof path === 'string' && path.startsWith(repo.root) && !path.includes('/.git/')) reads.push(path.slice(repo.root.length + 1));
      return (original as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.readFileSync;
    syncBuiltinESMExports();
    try {
      assert.equal(snapshotter.snapshot().tree, first.tree);
      assert.deepEqual(reads, [], 'nothing changed: no file is read');
      repo.write('untracked/u7.txt', 'changed\n');
      const second = snapshotter.snapshot();
      assert.deepEqual(reads, ['untracked/u7.txt'], 'only the changed file is read');
      assert.equal(second.tree, await gitWorktreeTree(repo.root));
    } finally {
      mutableFs.readFileSync = original;
      syncBuiltinESMExports();
    }
  });
});

describe('big and binary files are handled on purpose', { concurrency: true }, () => {
  test('an untracked file over the limit is left out and named, with its size and the reason', async () => {
    const repo = await repoWith({ 'small.txt': 'small\n' });
    repo.write('data/huge.bin', 'x'.repeat(5000));
    repo.write('data/ok.txt', 'y'.repeat(100));
    const snap = snapshotterFor(repo.root, { maxFileBytes: 4096 }).snapshot();
    const files = await lsTree(repo.root, snap.tree);
    assert.ok(!files.has('data/huge.bin'));
    assert.ok(files.has('data/ok.txt'));
    assert.equal(snap.skipped.length, 1);
    assert.equal(snap.skipped[0]!.path, 'data/huge.bin');
    assert.equal(snap.skipped[0]!.size, 5000);
    assert.match(snap.skipped[0]!.reason, /larger than/);
  });

  test('the default limit is 10 MB', async () => {
    const repo = await repoWith({ 'small.txt': 'small\n' });
    writeFileSync(join(repo.root, 'eleven.bin'), Buffer.alloc(11 * 1024 * 1024, 1));
    writeFileSync(join(repo.root, 'nine.bin'), Buffer.alloc(9 * 1024 * 1024, 1));
    const snap = snapshotterFor(repo.root).snapshot();
    assert.deepEqual(snap.skipped.map((s) => s.path), ['eleven.bin']);
    assert.ok((await lsTree(repo.root, snap.tree)).has('nine.bin'));
  });

  test('a tracked file that grew over the limit stays in the checkpoint as git has it, so restoring elsewhere never deletes it', async () => {
    const repo = await repoWith({ 'assets/model.bin': 'v1\n', 'app.js': 'app\n' });
    repo.write('assets/model.bin', 'z'.repeat(5000));
    repo.write('app.js', 'app v2\n');
    const snap = snapshotterFor(repo.root, { maxFileBytes: 4096 }).snapshot();
    assert.deepEqual(snap.skipped.map((s) => s.path), ['assets/model.bin'], 'it is named in the entry');
    const files = await lsTree(repo.root, snap.tree);
    assert.equal(files.get('assets/model.bin'), (await lsTree(repo.root, 'HEAD')).get('assets/model.bin'), "the index's version is kept");

    // Another machine: a clean checkout of the base commit, restored to that checkpoint.
    const clone = await cloneWithTree(repo, snap.tree);
    const objects = objectsFor(clone.root);
    const cloneSnapshotter = snapshotterFor(clone.root, { maxFileBytes: 4096 });
    const current = cloneSnapshotter.snapshot();
    const result = await restoreWorktree(clone.root, objects, snap.tree, current, cloneSnapshotter.trackedPaths());
    assert.deepEqual(result.deleted, [], 'nothing is deleted');
    assert.equal(clone.read('assets/model.bin'), 'v1\n');
    assert.equal(clone.read('app.js'), 'app v2\n');
  });

  test('a binary file is recorded byte for byte, never rewritten by redaction', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const secret = 'hunter2-very-secret-value';
    const binary = Buffer.concat([Buffer.from([0, 1, 2, 255, 0]), Buffer.from(`payload ${secret}`)]);
    writeFileSync(join(repo.root, 'blob.bin'), binary);
    repo.write('config.txt', `password=${secret}\n`);
    const redactText = (text: string) => text.split(secret).join('[REDACTED:DB_PASSWORD]');
    const snap = snapshotterFor(repo.root, { redactText }).snapshot();
    const stored = await objectsFor(repo.root).read(snap.files.get('blob.bin')!.oid, 'blob');
    assert.ok(stored.equals(binary), 'the binary file is stored as it is');
    assert.equal(await fileInTree(repo.root, snap.tree, 'config.txt'), 'password=[REDACTED:DB_PASSWORD]');
    assert.equal(repo.read('config.txt'), `password=${secret}\n`, 'the file on disk keeps its secret');
  });

  test('a secret in a file the user (or a command) staged with git add is redacted too', async () => {
    const repo = await repoWith({ 'a.txt': 'a\n' });
    const secret = 'staged-secret-0123456789';
    repo.write('creds.txt', `token: ${secret}\n`);
    await repo.git('add', 'creds.txt');
    repo.write('a.txt', `a ${secret}\n`);
    await repo.git('add', 'a.txt');
    const redactText = (text: string) => text.split(secret).join('[REDACTED:API_TOKEN]');
    const snap = snapshotterFor(repo.root, { redactText }).snapshot();
    assert.equal(await fileInTree(repo.root, snap.tree, 'creds.txt'), 'token: [REDACTED:API_TOKEN]');
    assert.equal(await fileInTree(repo.root, snap.tree, 'a.txt'), 'a [REDACTED:API_TOKEN]');
  });
});

// path -> content of every file under root, .git excluded (symlinks not followed).
function worktree(root: string, dir = root, out: Record<string, string> = {}): Record<string, string> {
  for (const name of fs.readdirSync(dir)) {
    if (name === '.git') continue;
    const path = join(dir, name);
    const stat = fs.lstatSync(path);
    if (stat.isDirectory()) worktree(root, path, out);
    else out[path.slice(root.length + 1)] = '';
  }
  return out;
}
