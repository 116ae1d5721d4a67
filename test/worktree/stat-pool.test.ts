// The stat pool (src/worktree/stat-pool.ts) stats half of a list on a worker thread: what it answers
// must be exactly what lstat says on this thread, for files, directories, symbolic links and paths
// that are gone, on both halves of the list, and again after the files changed.
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { statAt, StatPool, type StatFields } from '../../src/worktree/stat-pool.js';
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

describe('the stat pool', () => {
  test('answers what lstat answers, for every kind of path, on both threads, and again after changes', () => {
    const dir = scratch.dir('savepoint-stat-pool-');
    const paths: string[] = [];
    for (let i = 0; i < 500; i++) {
      const path = join(dir, `f${i}.txt`);
      writeFileSync(path, 'x'.repeat(i));
      paths.push(path);
    }
    mkdirSync(join(dir, 'sub'));
    symlinkSync('f1.txt', join(dir, 'link'));
    // A directory, a link, a missing file and a path beneath a file, in each half of the list.
    paths.splice(10, 0, join(dir, 'sub'), join(dir, 'link'), join(dir, 'missing'), join(dir, 'f3.txt/below'));
    paths.push(join(dir, 'sub'), join(dir, 'link'), join(dir, 'missing'), join(dir, 'f3.txt/below'));
    const pool = new StatPool();
    const statAll = (list: string[]) => {
      const results = pool.statAll(list);
      return list.map((_, i) => statAt(results, i));
    };
    assert.deepEqual(statAll(paths), paths.map(expected));
    for (let i = 0; i < 500; i += 7) writeFileSync(join(dir, `f${i}.txt`), 'changed');
    rmSync(join(dir, 'f499.txt'));
    assert.deepEqual(statAll(paths), paths.map(expected), 'the same list again, after changes');
    const other = paths.slice(100);
    assert.deepEqual(statAll(other), other.map(expected), 'a new list');
    assert.deepEqual(statAll([]), []);
  });
});
