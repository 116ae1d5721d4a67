// Shared pieces of the working-tree tests: a snapshotter for a temp repository, and git itself as the
// judge of what a checkpoint should be (`git add -A` into a scratch index, `git write-tree`), so the
// tests never trust the code under test to tell them what the right tree is.
import childProcess from 'node:child_process';
import fs, { copyFileSync, statSync, utimesSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { withBuiltin } from '../helpers/builtins.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ObjectStore } from '../../src/git/object-store.js';
import { findRepository } from '../../src/git/repository.js';
import type { SnapshotOptions } from '../../src/worktree/entries.js';
import { WorktreeSnapshotter } from '../../src/worktree/snapshot.js';
import { gitOut } from '../helpers/git.js';
import type { TempRepo } from '../helpers/temp-repo.js';

export function snapshotterFor(root: string, options: SnapshotOptions = {}): WorktreeSnapshotter {
  const repo = findRepository(root);
  return new WorktreeSnapshotter(repo, new ObjectStore(repo.commonDir), options);
}

export function objectsFor(root: string): ObjectStore {
  return new ObjectStore(findRepository(root).commonDir);
}

// The tree git makes of the working tree (tracked and untracked-not-ignored files, as they are on
// disk), built in a scratch copy of the index so the user's index is untouched.
export async function gitWorktreeTree(root: string): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'savepoint-scratch-index-'));
  const index = join(scratch, 'index');
  try {
    // The copy keeps the index's mtime: git's racy-clean check compares it with the files' mtimes,
    // and a fresh mtime would make a same-size edit in the same second look unchanged.
    const original = join(root, '.git', 'index');
    if (existsSync(original)) {
      copyFileSync(original, index);
      const { atime, mtime } = statSync(original);
      utimesSync(index, atime, mtime);
    }
    const env = { GIT_INDEX_FILE: index };
    await gitOut(root, ['add', '-A'], { env });
    return await gitOut(root, ['write-tree'], { env });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// path -> "mode oid" of every file in a tree, as `git ls-tree -r` lists it.
export async function lsTree(root: string, tree: string): Promise<Map<string, string>> {
  const out = await gitOut(root, ['ls-tree', '-r', '-z', tree]);
  const files = new Map<string, string>();
  for (const record of out.split('\0').filter(Boolean)) {
    const [meta, path] = record.split('\t') as [string, string];
    const [mode, , oid] = meta.split(' ');
    files.set(path, `${mode} ${oid}`);
  }
  return files;
}

// The text of `path` inside tree `tree`.
export function fileInTree(root: string, tree: string, path: string): Promise<string> {
  return gitOut(root, ['cat-file', 'blob', `${tree}:${path}`]);
}

// A small deterministic PRNG (mulberry32), so a failing random sequence can be replayed by seed.
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// `git clone` of `source` into a new temporary directory (a fresh checkout of its HEAD, the way
// another machine gets it); with `trees`, those trees' objects are fetched too (through a ref).
export async function cloneOf(source: string, ...trees: string[]): Promise<TempRepo> {
  for (const [i, tree] of trees.entries()) {
    const commit = await gitOut(source, ['commit-tree', tree, '-m', 'checkpoint']);
    await gitOut(source, ['update-ref', `refs/test-trees/t${i}`, commit]);
  }
  const parent = realpathSync(mkdtempSync(join(tmpdir(), 'savepoint-clone-')));
  const root = join(parent, 'clone');
  await gitOut(parent, ['clone', '-q', source, root]);
  if (trees.length) await gitOut(root, ['fetch', '-q', 'origin', 'refs/test-trees/*:refs/test-trees/*']);
  return {
    root,
    write: (path, content) => {
      const file = join(root, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    read: (path) => readFileSync(join(root, path), 'utf8'),
    git: (...args) => gitOut(root, args),
    remove: async () => rmSync(parent, { recursive: true, force: true }),
  };
}

// Counts the git commands the snapshotter runs (it runs them through execFileSync).
export function countGit<T>(fn: () => T): { value: T; spawns: number } {
  let spawns = 0;
  const counting = (original: typeof childProcess.execFileSync) =>
    ((...args: Parameters<typeof original>) => {
      spawns++;
      return original(...args);
    }) as typeof original;
  const value = withBuiltin(childProcess, 'execFileSync', counting, fn);
  return { value, spawns };
}

// Waits until every file and folder under `root` (its .git too, but not the objects) is older than
// a timestamp tick of its file system: only then may a witness or a cached hash vouch for what it
// saw (src/worktree/unchanged.ts, file-hasher.ts), so the next change is surely seen by its stat.
// Waits on the stats themselves rather than a fixed time, and gives a whole-second file system its
// two seconds. The 60 s bound is a safety net, not a duration the tests assert.
// (fs.readdirSync as it was when this file loaded: a test that counts the folders savepoint reads
// replaces it meanwhile.)
const listFolder = fs.readdirSync;
export async function pastTick(root: string): Promise<void> {
  const newest = (dir: string): number => {
    let latest = 0;
    for (const entry of listFolder(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (path === join(root, '.git', 'objects')) continue;
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (!stat) continue; // removed as it was listed
      latest = Math.max(latest, settledAt(stat.ctimeMs), entry.isDirectory() ? newest(path) : 0);
    }
    return latest;
  };
  const settledAt = (ctimeMs: number) => ctimeMs + (ctimeMs % 1000 === 0 ? 2000 : 100);
  const until = Date.now() + 60_000;
  for (let due = Math.max(settledAt(lstatSync(root).ctimeMs), newest(root)); Date.now() <= due; due = Math.max(settledAt(lstatSync(root).ctimeMs), newest(root))) {
    if (Date.now() > until) throw new Error(`the files under ${root} kept changing: no timestamp tick passed in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(1, Math.ceil(due - Date.now())))));
  }
}
