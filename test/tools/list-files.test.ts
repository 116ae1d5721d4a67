import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createListFilesTool } from '../../src/tools/list-files.js';
import { useScratch } from '../helpers/scratch.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

describe('list_files', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let tool: ReturnType<typeof createListFilesTool>;
  before(async () => {
    repo = await scratch.repo({
      '.gitignore': 'node_modules/\n*.log\ndist/\n',
      'README.md': '# hi\n',
      'src/b.ts': 'b\n',
      'src/a.ts': 'a\n',
      'src/deleted.ts': 'gone soon\n',
    });
    repo.write('src/untracked.ts', 'new\n');
    repo.write('src/nested/deep file.ts', 'deep\n');
    repo.write('node_modules/dep/index.js', 'ignored\n');
    repo.write('debug.log', 'ignored\n');
    repo.write('dist/app.js', 'ignored\n');
    rmSync(join(repo.root, 'src/deleted.ts'));
    tool = createListFilesTool(repo.root);
  });

  it('lists tracked and untracked files, sorted, and leaves out ignored and deleted ones', async () => {
    const result = await tool.execute({});
    assert.equal(result.isError, false);
    assert.equal(result.output, ['.gitignore', 'README.md', 'src/a.ts', 'src/b.ts', 'src/nested/deep file.ts', 'src/untracked.ts'].join('\n'));
    assert.equal(result.summary, '6 files');
  });

  it('lists only the files under a path, relative to the repository root', async () => {
    const result = await tool.execute({ path: 'src/nested' });
    assert.equal(result.output, 'src/nested/deep file.ts');
    assert.equal(result.summary, '1 file');
    assert.equal((await tool.execute({ path: '.' })).summary, '6 files');
    assert.equal((await tool.execute({ path: join(repo.root, 'src') })).summary, '4 files');
  });

  it('treats the path literally, not as a glob', async () => {
    const result = await tool.execute({ path: 'src/*.ts' });
    assert.equal(result.isError, true);
    assert.match(result.output, /No such file or directory: src\/\*\.ts/);
  });

  it('says so when a directory holds only ignored files', async () => {
    const result = await tool.execute({ path: 'node_modules' });
    assert.equal(result.isError, false);
    assert.equal(result.output, '(no files under node_modules)');
  });

  it('lists each file once during a merge conflict', async () => {
    const conflict = await createTempRepo({ files: { 'f.txt': 'base\n' }, commit: true });
    try {
      await conflict.git('checkout', '-q', '-b', 'other');
      conflict.write('f.txt', 'other\n');
      await conflict.git('commit', '-qam', 'other');
      await conflict.git('checkout', '-q', 'main');
      conflict.write('f.txt', 'main\n');
      await conflict.git('commit', '-qam', 'main');
      await conflict.git('merge', 'other').catch(() => undefined);
      const result = await createListFilesTool(conflict.root).execute({});
      assert.equal(result.output, 'f.txt');
    } finally {
      await conflict.remove();
    }
  });

  it('refuses paths outside the repository and .git', async () => {
    for (const path of ['..', '/tmp', '.git']) {
      const result = await tool.execute({ path });
      assert.equal(result.isError, true, path);
      assert.match(result.output, /outside the repository|off limits/);
    }
  });

  it('describes itself with its path, . by default', () => {
    assert.equal(tool.describe({}), 'list_files .');
    assert.equal(tool.describe({ path: 'src' }), 'list_files src');
    assert.equal(tool.isRepeatSafe({}), true);
    assert.equal(tool.needsApproval({}), false);
    assert.equal(tool.mayChangeFiles({}), false);
  });
});
