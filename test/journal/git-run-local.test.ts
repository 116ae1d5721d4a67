// A run's local side in a real repository, read back with git: HEAD as git names it, the run lock
// held once, and the pending ref that keeps a tree from gc set and dropped.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { RunLockedError } from '../../src/errors/index.js';
import { findRepository } from '../../src/git/repository.js';
import { GitRunLocal } from '../../src/journal/git-run-local.js';
import { createTempRepo } from '../helpers/temp-repo.js';

test('GitRunLocal: HEAD, the run lock and the pending tree, as git sees them', async () => {
  const repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
  after(() => repo.remove());
  const local = new GitRunLocal(findRepository(repo.root));
  assert.equal(local.worktree, repo.root);
  assert.equal(local.headCommit(), await repo.git('rev-parse', 'HEAD'));
  assert.equal(local.headBranch(), 'main');
  local.assertWritable();

  const lock = local.lock('fix-1a2b3c');
  assert.throws(() => local.lock('fix-1a2b3c'), RunLockedError);
  lock.release();
  local.lock('fix-1a2b3c').release();

  const tree = await repo.git('rev-parse', 'HEAD^{tree}');
  await local.keepTree('fix-1a2b3c', tree);
  assert.equal(await repo.git('rev-parse', 'refs/savepoint/pending/fix-1a2b3c'), tree);
  await local.releaseTree('fix-1a2b3c');
  assert.equal(await repo.git('for-each-ref', 'refs/savepoint/pending/'), '');
});
