// Clean and smudge filters as git applies them, through git itself in the user's repository: only
// drivers its configuration defines count; a file is recorded in its clean form and restored in its
// smudged one; a filter that fails is FilterFailedError naming the file and what it was doing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FilterFailedError } from '../../src/errors/index.js';
import { WorktreeFilters } from '../../src/worktree/filters.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

describe('worktree filters', () => {
  const scratch = useScratch();

  it('filter no file whose attribute names a driver the repository does not define', async () => {
    const repo = await scratch.repo({ '.gitattributes': '*.up filter=upper\n', 'a.up': 'hello\n' });
    const filters = new WorktreeFilters(repo.root);
    assert.deepEqual(filters.filtered(['a.up']), new Set());
    assert.equal(filters.clean('a.up', Buffer.from('hello\n')).toString(), 'hello\n');
  });

  it('find the files whose filter the configuration defines, clean them as git add does and smudge them as git checkout does', async () => {
    const repo = await scratch.repo({ '.gitattributes': '*.up filter=upper\n*.other filter=undefined-driver\n*.bad filter=broken\n' });
    await gitOut(repo.root, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    await gitOut(repo.root, ['config', 'filter.upper.smudge', 'tr A-Z a-z']);
    await gitOut(repo.root, ['config', 'filter.broken.clean', 'echo the filter broke >&2; exit 3']);
    await gitOut(repo.root, ['config', 'filter.broken.smudge', 'echo cannot smudge >&2; exit 4']);
    await gitOut(repo.root, ['config', 'filter.broken.required', 'true']);
    const filters = new WorktreeFilters(repo.root);
    assert.equal(filters.any, true);
    assert.deepEqual(filters.filtered(['a.up', 'dir/b.up', 'c.txt', 'd.other', 'e.bad']), new Set(['a.up', 'dir/b.up', 'e.bad']));
    assert.deepEqual(filters.filtered([]), new Set());

    const clean = filters.clean('a.up', Buffer.from('hello world\n'));
    assert.equal(clean.toString(), 'HELLO WORLD\n');
    writeFileSync(join(repo.root, 'a.up'), 'hello world\n');
    await gitOut(repo.root, ['add', 'a.up']);
    const stored = await gitOut(repo.root, ['rev-parse', ':a.up']);
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', stored]), 'HELLO WORLD', 'the clean form is the one git add stores');
    assert.equal(filters.smudge('a.up', stored).toString(), 'hello world\n');
    assert.equal(filters.clean('c.txt', Buffer.from('as is\n')).toString(), 'as is\n');

    assert.throws(() => filters.clean('e.bad', Buffer.from('x')), (error: unknown) => {
      assert.ok(error instanceof FilterFailedError);
      assert.equal(error.code, 'EFILTER');
      assert.deepEqual([error.data.path, error.data.direction], ['e.bad', 'clean']);
      assert.match(error.data.detail, /the filter broke/);
      return true;
    });
    assert.throws(() => filters.smudge('e.bad', stored), (error: unknown) => error instanceof FilterFailedError && error.data.direction === 'smudge' && /cannot smudge/.test(error.data.detail));
  });
});
