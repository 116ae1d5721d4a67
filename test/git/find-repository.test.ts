// findRepository asks git once per working tree in a process (a command asks several times about
// the same one), and asks again when the answer may have changed: the .git made anew or removed,
// its config changed, another GIT_DIR, or a directory below the top. The git it runs is counted
// by a wrapper on PATH.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NotARepositoryError } from '../../src/index.js';
import { findRepository } from '../../src/git/repository.js';
import { runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// An environment whose `git` is a wrapper that appends a line to a log for each run, and the count.
function countingGit(): { env: NodeJS.ProcessEnv; runs: () => number } {
  const bin = scratch.dir('savepoint-gitcount-');
  const log = join(bin, 'runs.log');
  writeFileSync(log, '');
  const real = (process.env.PATH ?? '').split(':').filter(Boolean).join(':');
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho run >> '${log}'\nPATH='${real}' exec git "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  return { env: { ...process.env, PATH: `${bin}:${real}` }, runs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

describe('findRepository asks git once per working tree', () => {
  it('the same top again: the same answer, no second git', async () => {
    const repo = await scratch.repo();
    const git = countingGit();
    const first = findRepository(repo.root, git.env);
    assert.deepEqual(findRepository(repo.root, git.env), first);
    assert.deepEqual(first, { root: repo.root, gitdir: join(repo.root, '.git'), commonDir: join(repo.root, '.git') });
    assert.equal(git.runs(), 1);
  });

  it('asks again once the repository\'s config changed (core.bare, core.worktree live there)', async () => {
    const repo = await scratch.repo();
    const git = countingGit();
    findRepository(repo.root, git.env);
    assert.equal((await runGit(repo.root, ['config', 'savepoint.test', 'yes'])).code, 0);
    findRepository(repo.root, git.env);
    findRepository(repo.root, git.env);
    assert.equal(git.runs(), 2);
  });

  it('asks again when .git is removed (NotARepositoryError) or made anew', async () => {
    const repo = await scratch.repo();
    const git = countingGit();
    findRepository(repo.root, git.env);
    rmSync(join(repo.root, '.git'), { recursive: true });
    assert.throws(() => findRepository(repo.root, git.env), NotARepositoryError);
    assert.equal((await runGit(repo.root, ['init', '-q'])).code, 0);
    assert.equal(findRepository(repo.root, git.env).gitdir, join(repo.root, '.git'));
    assert.equal(git.runs(), 3);
  });

  it('asks again for another GIT_DIR, and every time for a directory below the top', async () => {
    const repo = await scratch.repo();
    const git = countingGit();
    findRepository(repo.root, git.env);
    const withGitDir = { ...git.env, GIT_DIR: join(repo.root, '.git') };
    assert.equal(findRepository(repo.root, withGitDir).root, repo.root);
    const below = join(repo.root, 'src');
    mkdirSync(below);
    assert.equal(findRepository(below, git.env).root, repo.root);
    assert.equal(findRepository(below, git.env).root, repo.root);
    // With GIT_DIR, git is asked once more (the files' own repository is the answer already kept),
    // and about the directory below each time.
    assert.equal(git.runs(), 1 + 1 + 2);
  });
});
