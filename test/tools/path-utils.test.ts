import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { resolveInRepo, toRepoRelative } from '../../src/tools/path-utils.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

describe('resolveInRepo', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let outside: string;
  before(async () => {
    repo = await scratch.repo({ 'src/app.js': 'x\n' }, { commit: false });
    outside = scratch.dir('savepoint-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    symlinkSync(join(outside, 'secret.txt'), join(repo.root, 'link-file'));
    symlinkSync(outside, join(repo.root, 'link-dir'));
    symlinkSync(join(outside, 'not-yet.txt'), join(repo.root, 'dangling'));
    symlinkSync('src', join(repo.root, 'inner-link'));
  });

  const refused = (path: string, pattern?: RegExp) =>
    assert.throws(() => resolveInRepo(repo.root, path), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'EOUTSIDE');
      if (pattern) assert.match(error.message, pattern);
      return true;
    });

  it('resolves relative paths, existing or not, against the root', () => {
    assert.equal(resolveInRepo(repo.root, 'src/app.js'), join(repo.root, 'src/app.js'));
    assert.equal(resolveInRepo(repo.root, 'new/dir/file.txt'), join(repo.root, 'new/dir/file.txt'));
    assert.equal(resolveInRepo(repo.root, '.'), repo.root);
  });

  it('accepts absolute paths inside the root and .. that stays inside', () => {
    assert.equal(resolveInRepo(repo.root, join(repo.root, 'src/app.js')), join(repo.root, 'src/app.js'));
    assert.equal(resolveInRepo(repo.root, 'src/../src/app.js'), join(repo.root, 'src/app.js'));
  });

  it('follows symbolic links that stay inside the repository', () => {
    assert.equal(resolveInRepo(repo.root, 'inner-link/app.js'), join(repo.root, 'src/app.js'));
  });

  it('refuses .. escapes and absolute paths outside', () => {
    refused('../x', /outside the repository/);
    refused('src/../../x');
    refused('/etc/passwd');
    refused(join(outside, 'secret.txt'));
  });

  it('refuses symbolic links pointing out, to a file or a directory', () => {
    refused('link-file');
    refused('link-dir/secret.txt');
    refused('link-dir');
  });

  it('refuses a not-yet-existing file under a symlinked directory or behind a dangling link', () => {
    refused('link-dir/new/file.txt');
    refused('dangling');
  });

  it('refuses .git and everything in it, however it is spelled', () => {
    refused('.git', /\.git/);
    refused('.git/config');
    refused('.git/hooks/new-hook');
    refused('src/../.git/HEAD');
    refused('.GIT/config');
    refused(join(repo.root, '.git', 'config'));
  });

  it('refuses a separate git directory that lives inside the working tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'savepoint-gitfile-'));
    try {
      mkdirSync(join(root, 'meta'));
      writeFileSync(join(root, 'meta', 'HEAD'), 'ref: refs/heads/main\n');
      writeFileSync(join(root, '.git'), 'gitdir: meta\n');
      assert.throws(() => resolveInRepo(root, 'meta/HEAD'), { code: 'EOUTSIDE' });
      assert.throws(() => resolveInRepo(root, '.git'), { code: 'EOUTSIDE' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses empty paths', () => {
    refused('');
    refused('   ');
  });

  it('shows paths relative to the root with forward slashes', () => {
    assert.equal(toRepoRelative(repo.root, join(repo.root, 'src', 'app.js')), 'src/app.js');
    assert.equal(toRepoRelative(repo.root, repo.root), '.');
  });
});
