import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createWriteFileTool } from '../../src/tools/write-file.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

describe('write_file', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let outside: string;
  let tool: ReturnType<typeof createWriteFileTool>;
  before(async () => {
    repo = await scratch.repo({ 'old.txt': 'old content\n' }, { commit: false });
    outside = scratch.dir('savepoint-outside-');
    symlinkSync(outside, join(repo.root, 'outside-dir'));
    symlinkSync(join(outside, 'target.txt'), join(repo.root, 'dangling-link'));
    tool = createWriteFileTool(repo.root);
  });

  it('creates a file and its parent directories', async () => {
    const result = await tool.execute({ path: 'src/deep/new.js', content: 'export const x = 1;\n' });
    assert.equal(result.isError, false);
    assert.equal(result.output, 'Created src/deep/new.js (20 bytes).');
    assert.equal(result.summary, 'created, 20 bytes');
    assert.equal(repo.read('src/deep/new.js'), 'export const x = 1;\n');
  });

  it('replaces an existing file and counts bytes, not characters', async () => {
    const result = await tool.execute({ path: 'old.txt', content: 'héllo' });
    assert.equal(result.output, 'Replaced old.txt (6 bytes, was 12 bytes).');
    assert.equal(result.summary, 'replaced, 6 bytes');
    assert.equal(repo.read('old.txt'), 'héllo');
    const again = await tool.execute({ path: 'old.txt', content: 'héllo' });
    assert.equal(again.output, 'Replaced old.txt (6 bytes, same content as before).');
  });

  it('is repeat-safe only while the target does not exist yet', () => {
    assert.equal(tool.isRepeatSafe({ path: 'not-there.txt', content: '' }), true);
    assert.equal(tool.isRepeatSafe({ path: 'old.txt', content: '' }), false);
    assert.equal(tool.needsApproval({ path: 'x', content: '' }), true);
    assert.equal(tool.mayChangeFiles({ path: 'x', content: '' }), true);
    assert.equal(tool.describe({ path: 'src/x.js', content: '...' }), 'write_file src/x.js');
  });

  it('refuses to write into .git', async () => {
    for (const path of ['.git/hooks/pre-commit', '.git/config', '.git', 'sub/../.git/HEAD']) {
      const result = await tool.execute({ path, content: '#!/bin/sh\necho pwned\n' });
      assert.equal(result.isError, true, path);
      assert.match(result.output, /off limits/);
    }
    assert.equal(existsSync(join(repo.root, '.git/hooks/pre-commit')), false);
    assert.match(readFileSync(join(repo.root, '.git/HEAD'), 'utf8'), /^ref: /);
  });

  it('refuses to write outside, through .., an absolute path or a symbolic link', async () => {
    const paths = ['../escape.txt', join(outside, 'abs.txt'), 'outside-dir/new.txt', 'outside-dir/sub/new.txt', 'dangling-link'];
    for (const path of paths) {
      const result = await tool.execute({ path, content: 'x' });
      assert.equal(result.isError, true, path);
      assert.match(result.output, /outside the repository/);
    }
    assert.deepEqual(readdirSync(outside), []);
  });

  it('answers a directory target and bad input with an error result', async () => {
    const dir = await tool.execute({ path: 'src', content: 'x' });
    assert.equal(dir.isError, true);
    assert.match(dir.output, /is a directory/);
    const missing = await tool.execute({ path: 'a.txt' } as never);
    assert.equal(missing.isError, true);
    assert.match(missing.output, /"content" is required/);
    const wrongType = await tool.execute({ path: 'a.txt', content: 5 } as never);
    assert.match(wrongType.output, /"content" must be a string/);
    assert.equal(tool.isRepeatSafe({ path: 5 } as never), true);
  });
});
