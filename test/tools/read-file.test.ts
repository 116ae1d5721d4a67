import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createReadFileTool } from '../../src/tools/read-file.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

describe('read_file', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let outside: string;
  let tool: ReturnType<typeof createReadFileTool>;
  before(async () => {
    repo = await scratch.repo(
      {
        'src/app.js': 'const a = 1;\nconst b = 2;\n\nexport { a, b };\n',
        'long.txt': Array.from({ length: 2500 }, (_, i) => `row ${i + 1}`).join('\n'),
        'empty.txt': '',
      },
      { commit: false },
    );
    writeFileSync(join(repo.root, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    outside = scratch.dir('savepoint-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    symlinkSync(join(outside, 'secret.txt'), join(repo.root, 'secret-link'));
    symlinkSync(outside, join(repo.root, 'outside-dir'));
    tool = createReadFileTool(repo.root);
  });

  it('returns the text with right-aligned line numbers and a tab, like cat -n', async () => {
    const result = await tool.execute({ path: 'src/app.js' });
    assert.equal(result.isError, false);
    assert.equal(result.output, '     1\tconst a = 1;\n     2\tconst b = 2;\n     3\t\n     4\texport { a, b };');
    assert.equal(result.summary, '4 lines');
  });

  it('reads from a 1-based offset for a limited number of lines', async () => {
    const result = await tool.execute({ path: 'src/app.js', offset: 2, limit: 2 });
    assert.equal(result.output, '     2\tconst b = 2;\n     3\t\n\n[lines 2-3 of 4; read on with offset 4]');
    assert.equal(result.summary, 'lines 2-3 of 4');
  });

  it('shows the first 2000 lines of a long file and says how to read on', async () => {
    const result = await tool.execute({ path: 'long.txt' });
    const lines = result.output.split('\n');
    assert.equal(lines[0], '     1\trow 1');
    assert.equal(lines[1999], '  2000\trow 2000');
    assert.equal(lines.at(-1), '[lines 1-2000 of 2500; read on with offset 2001]');
    const rest = await tool.execute({ path: 'long.txt', offset: 2001 });
    assert.deepEqual(rest.output.split('\n').slice(-3), ['  2500\trow 2500', '', '[lines 2001-2500 of 2500]']);
  });

  it('says so for an empty file and for an offset past the end', async () => {
    assert.equal((await tool.execute({ path: 'empty.txt' })).output, '(empty.txt is empty)');
    const past = await tool.execute({ path: 'src/app.js', offset: 10 });
    assert.equal(past.isError, false);
    assert.match(past.output, /has 4 lines; nothing to show from line 10/);
  });

  it('accepts an absolute path inside the repository', async () => {
    const result = await tool.execute({ path: join(repo.root, 'src/app.js') });
    assert.equal(result.isError, false);
  });

  it('answers a missing file, a directory or a binary file with an error result', async () => {
    const missing = await tool.execute({ path: 'nope.txt' });
    assert.equal(missing.isError, true);
    assert.equal(missing.output, 'No such file or directory: nope.txt');
    const dir = await tool.execute({ path: 'src' });
    assert.equal(dir.isError, true);
    assert.match(dir.output, /Is a directory.*list_files/);
    const binary = await tool.execute({ path: 'image.bin' });
    assert.equal(binary.isError, true);
    assert.match(binary.output, /binary file/);
  });

  it('answers a FIFO with an error result at once instead of waiting for a writer', async () => {
    execFileSync('mkfifo', [join(repo.root, 'pipe')]);
    const started = performance.now();
    const result = await tool.execute({ path: 'pipe' });
    assert.equal(result.isError, true);
    assert.equal(result.output, 'pipe is a FIFO (named pipe), not a regular file; read_file reads regular files only.');
    assert.ok(performance.now() - started < 2000);
  });

  it('answers a device node with an error result, never reading it', { skip: process.getuid?.() !== 0 && 'mknod needs root' }, async () => {
    // /dev/zero's numbers: read, it would never end.
    execFileSync('mknod', [join(repo.root, 'zero'), 'c', '1', '5']);
    const result = await tool.execute({ path: 'zero' });
    assert.equal(result.isError, true);
    assert.match(result.output, /^zero is a character device, not a regular file/);
  });

  it('refuses paths outside the repository and inside .git', async () => {
    for (const path of ['../x', '/etc/passwd', 'secret-link', 'outside-dir/secret.txt', '.git/config']) {
      const result = await tool.execute({ path });
      assert.equal(result.isError, true, path);
      assert.match(result.output, /outside the repository|off limits/, path);
      assert.doesNotMatch(result.output, /secret\n/);
    }
  });

  it('rejects bad input without throwing', async () => {
    for (const input of [{}, { path: 42 }, { path: 'src/app.js', offset: 0 }, { path: 'src/app.js', limit: 1.5 }, { path: 'a', extra: 1 }, null, 'src/app.js']) {
      const result = await tool.execute(input as never);
      assert.equal(result.isError, true, JSON.stringify(input));
      assert.match(result.output, /input/i);
      assert.equal(result.summary, 'error: invalid input');
    }
    assert.match((await tool.execute({} as never)).output, /"path" is required/);
  });

  it('is a repeat-safe read that needs no approval and changes nothing', () => {
    const input = { path: 'src/app.js' };
    assert.equal(tool.isRepeatSafe(input), true);
    assert.equal(tool.needsApproval(input), false);
    assert.equal(tool.mayChangeFiles(input), false);
    assert.equal(tool.describe(input), 'read_file src/app.js');
  });
});
