// The stat pool (src/worktree/stat-pool.ts) checks a list of paths against the stats they are
// expected to have, on a worker thread and this one: it must report exactly the paths whose lstat
// is not the expected one (every kind of path: files, directories, symbolic links, paths that are
// gone or beneath a file), with what lstat says of them, whichever thread checked them; and when
// a worker is gone, this thread alone gives the same answer.
import '../helpers/on-disk.js'; // the file system's own stat behaviour is the subject
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { StatList, StatPool, type StatFields } from '../../src/worktree/stat-pool.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function expected(path: string): StatFields | undefined {
  try {
    const { mtimeMs, ctimeMs, size, ino, mode } = lstatSync(path);
    return { mtimeMs, ctimeMs, size, ino, mode };
  } catch {
    return undefined;
  }
}

// 2,000 files, and a directory, a link, a missing file and a path beneath a file near each end
// (paths from the directory, as git names them).
function makeList(): { dir: string; paths: string[] } {
  const dir = scratch.dir('savepoint-stat-pool-');
  const paths: string[] = [];
  for (let i = 0; i < 2000; i++) {
    writeFileSync(join(dir, `f${i}.txt`), 'x'.repeat(i % 300));
    paths.push(`f${i}.txt`);
  }
  mkdirSync(join(dir, 'sub'));
  symlinkSync('f1.txt', join(dir, 'link'));
  const odd = ['sub', 'link', 'missing', 'f3.txt/below'];
  paths.splice(10, 0, ...odd);
  paths.push(...odd);
  return { dir, paths };
}

// Checks `list` and gives the reported indices with the stats found for them.
function check(pool: StatPool, list: StatList, pause = false): Array<[number, StatFields | undefined]> {
  pool.begin(list);
  // Time for the worker to start and claim chunks before this thread joins in.
  if (pause) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
  return pool.finish().map((i) => [i, list.freshAt(i)]);
}

const all = (dir: string, paths: string[]) => paths.map((path, i): [number, StatFields | undefined] => [i, expected(join(dir, path))]);

describe('the stat pool', () => {
  test('reports the paths whose stat is not the expected one, with their stats, from both threads', () => {
    const { dir, paths } = makeList();
    const pool = new StatPool();
    const list = new StatList(paths, dir);
    assert.deepEqual(check(pool, list, true), all(dir, paths), 'nothing expected: every path is reported');
    assert.ok(pool.workerChunks > 0, 'the worker checked part of the list');
    paths.forEach((path, i) => list.expect(i, expected(join(dir, path))));
    const gone = all(dir, paths).filter(([, stat]) => stat === undefined);
    assert.deepEqual(check(pool, list, true), gone, 'as expected: only what has no stat is reported');
    const edited = new Set<string>([join(dir, 'f1999.txt')]);
    for (let i = 0; i < 2000; i += 97) edited.add(join(dir, `f${i}.txt`));
    for (const path of edited) writeFileSync(path, 'changed');
    rmSync(join(dir, 'f1999.txt'));
    assert.deepEqual(check(pool, list), all(dir, paths).filter(([i, stat]) => stat === undefined || edited.has(join(dir, paths[i]!))), 'after changes: the changed and the gone');
    const other = new StatList(paths.slice(100), dir);
    assert.deepEqual(check(pool, other), all(dir, paths.slice(100)), 'a new list');
    assert.deepEqual(check(pool, new StatList([], dir)), []);
  });

  test('without its worker, this thread gives the same answer alone', async () => {
    const { dir, paths } = makeList();
    const pool = new StatPool();
    const list = new StatList(paths, dir);
    check(pool, list, true);
    assert.ok(pool.workerChunks > 0);
    const worker = (pool as unknown as { workers: Worker[] }).workers[0]!;
    void worker.terminate();
    await once(worker, 'exit');
    paths.forEach((path, i) => list.expect(i, i % 2 ? expected(join(dir, path)) : undefined));
    assert.deepEqual(check(pool, list), all(dir, paths).filter(([i, stat]) => i % 2 === 0 || stat === undefined));
    assert.equal(pool.workerChunks, 0);
  });

  test('in the directory of its paths, a list lstats them as they are; moved elsewhere, absolute again', () => {
    const { dir, paths } = makeList();
    const pool = new StatPool();
    const home = process.cwd();
    try {
      process.chdir(dir);
      const list = new StatList(paths, dir);
      assert.equal(list.paths, paths, 'the very paths, relative to the working directory');
      assert.equal(list.resolvable(paths), list);
      paths.forEach((path, i) => list.expect(i, i % 3 ? expected(join(dir, path)) : undefined));
      const answer = all(dir, paths).filter(([i, stat]) => i % 3 === 0 || stat === undefined);
      assert.deepEqual(check(pool, list, true), answer);
      process.chdir(home);
      const moved = list.resolvable(paths);
      assert.notEqual(moved, list);
      assert.deepEqual(moved.paths, paths.map((path) => `${dir}/${path}`));
      assert.deepEqual(check(pool, moved, true), answer, 'what it expected goes with it');
    } finally {
      process.chdir(home);
    }
  });

  test('with three workers the answer is the same, and they share the list', () => {
    const { dir, paths } = makeList();
    const pool = new StatPool(3);
    const list = new StatList(paths, dir);
    assert.deepEqual(check(pool, list, true), all(dir, paths));
    assert.ok(pool.workerChunks > 0);
    paths.forEach((path, i) => list.expect(i, i % 5 ? expected(join(dir, path)) : undefined));
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(check(pool, list, round === 0), all(dir, paths).filter(([i, stat]) => i % 5 === 0 || stat === undefined), `round ${round}`);
    }
  });
});
