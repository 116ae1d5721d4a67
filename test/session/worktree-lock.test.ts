// One live run at a time in a working tree: a second run that would go live there is refused with
// EWORKTREEBUSY, naming the run that holds it and how to run both (a worktree of its own); released,
// the tree can be held again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { WorktreeBusyError } from '../../src/errors/index.js';
import type { Repository } from '../../src/git/repository.js';
import { holdWorktree } from '../../src/session/worktree-lock.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('a second run is refused while the first holds the tree, and may hold it once released', () => {
  const dir = scratch.dir('savepoint-worktree-lock-');
  const repo = { root: dir, gitdir: dir } as Repository;
  const held = holdWorktree(repo, 'first-1a2b');
  try {
    assert.throws(() => holdWorktree(repo, 'second-3c4d'), (error: unknown) => {
      assert.ok(error instanceof WorktreeBusyError);
      assert.equal(error.code, 'EWORKTREEBUSY');
      assert.deepEqual(error.data, { run: 'second-3c4d', holder: 'first-1a2b', pid: process.pid, host: hostname(), root: dir });
      assert.match(error.message, /git worktree add \.\.\/second-3c4d/);
      return true;
    });
  } finally {
    held.release();
  }
  holdWorktree(repo, 'second-3c4d').release();
});

test('a run that holds the tree again finds its name already written and leaves the file as it is; another run rewrites it', () => {
  const dir = scratch.dir('savepoint-worktree-lock-');
  const repo = { root: dir, gitdir: dir } as Repository;
  const holderFile = join(dir, 'savepoint', 'locks', '_worktree.run');
  holdWorktree(repo, 'first-1a2b').release();
  assert.equal(readFileSync(holderFile, 'utf8'), 'first-1a2b\n');
  const written = statSync(holderFile, { bigint: true }).mtimeNs;
  // A resume after a kill: the killed process wrote the same name moments before.
  holdWorktree(repo, 'first-1a2b').release();
  assert.equal(statSync(holderFile, { bigint: true }).mtimeNs, written, 'the holder file was rewritten');
  holdWorktree(repo, 'second-3c4d').release();
  assert.equal(readFileSync(holderFile, 'utf8'), 'second-3c4d\n');
});
