// The file set list_files and search work on, as git sees it: git run with output that does not
// depend on the person's config (paths unquoted), a failure thrown with git's own words, and the
// pathspec of a tool's path (the whole repository, a path inside it, or a refusal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PathOutsideRepositoryError } from '../../src/errors/index.js';
import { pathspecFor, runGit } from '../../src/tools/git-files.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('git lists files with their names as they are, and a failure carries what git said', async () => {
  const repo = await scratch.repo({ 'naïve café.txt': 'x\n', 'src/a.ts': 'a\n' });
  const { stdout, exitCode } = await runGit(repo.root, ['ls-files']);
  assert.equal(exitCode, 0);
  assert.deepEqual(stdout.split('\n').filter(Boolean), ['naïve café.txt', 'src/a.ts']);
  assert.equal((await runGit(repo.root, ['grep', '-q', 'nothing-like-this'], [0, 1])).exitCode, 1, 'an exit code asked for is no failure');
  await assert.rejects(runGit(repo.root, ['rev-parse', 'no-such-ref']), /^Error: git rev-parse failed: .*no-such-ref/);
});

test("a tool's path becomes a pathspec relative to the root; outside the repository or missing, it throws", async () => {
  const repo = await scratch.repo({ 'src/a.ts': 'a\n' });
  assert.deepEqual(pathspecFor(repo.root, undefined), { pathspec: [], shown: '.' });
  assert.deepEqual(pathspecFor(repo.root, '.'), { pathspec: [], shown: '.' });
  assert.deepEqual(pathspecFor(repo.root, 'src'), { pathspec: ['--', 'src'], shown: 'src' });
  assert.deepEqual(pathspecFor(repo.root, join(repo.root, 'src', 'a.ts')), { pathspec: ['--', 'src/a.ts'], shown: 'src/a.ts' });
  assert.deepEqual(pathspecFor(repo.root, 'src/..'), { pathspec: [], shown: '.' });
  assert.throws(() => pathspecFor(repo.root, '../elsewhere'), PathOutsideRepositoryError);
  assert.throws(() => pathspecFor(repo.root, 'missing'), /ENOENT/);
});
