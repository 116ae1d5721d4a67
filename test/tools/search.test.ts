import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createSearchTool } from '../../src/tools/search.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

describe('search', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let tool: ReturnType<typeof createSearchTool>;
  before(async () => {
    repo = await scratch.repo({
      '.gitignore': 'build/\n',
      'src/app.js': 'const x = 1; // TODO: rename\nconsole.log(x);\n// TODO(later): test\n',
      'lib/util.js': 'export function util() {}\n',
    });
    repo.write('src/new.js', 'TODO in an untracked file\n');
    repo.write('build/out.js', 'TODO in an ignored file\n');
    repo.write('we:ird.txt', 'a line with TODO: and colons\n');
    writeFileSync(join(repo.root, 'blob.bin'), Buffer.from('TODO\0binary'));
    repo.write('many.txt', Array.from({ length: 600 }, (_, i) => `hit ${i + 1}`).join('\n'));
    tool = createSearchTool(repo.root);
  });

  it('returns matches as file:line: text, tracked and untracked, skipping ignored and binary files', async () => {
    const result = await tool.execute({ pattern: 'TODO' });
    assert.equal(result.isError, false);
    assert.equal(
      result.output,
      [
        'src/app.js:1: const x = 1; // TODO: rename',
        'src/app.js:3: // TODO(later): test',
        'src/new.js:1: TODO in an untracked file',
        'we:ird.txt:1: a line with TODO: and colons',
      ].join('\n'),
    );
    assert.equal(result.summary, '4 matches in 3 files');
  });

  it('searches only under a path', async () => {
    const result = await tool.execute({ pattern: 'TODO', path: 'src' });
    assert.equal(result.summary, '3 matches in 2 files');
    const file = await tool.execute({ pattern: 'TODO', path: 'src/new.js' });
    assert.equal(file.output, 'src/new.js:1: TODO in an untracked file');
  });

  it('takes extended regular expressions, including ones that start with a dash', async () => {
    const result = await tool.execute({ pattern: 'TODO(\\(later\\))?:' });
    assert.equal(result.summary, '3 matches in 2 files');
    const dash = await tool.execute({ pattern: '-x' });
    assert.equal(dash.isError, false);
  });

  it('reads regular files only: a FIFO named as the path is an error result, and one in the tree is skipped without waiting', async () => {
    const fifoRepo = await scratch.repo({ 'piped.txt': 'TODO tracked\n', 'plain.txt': 'TODO plain\n' });
    // A tracked file replaced by a FIFO, and an untracked one: reading either would wait for a writer.
    rmSync(join(fifoRepo.root, 'piped.txt'));
    execFileSync('mkfifo', [join(fifoRepo.root, 'piped.txt'), join(fifoRepo.root, 'new-pipe')]);
    const search = createSearchTool(fifoRepo.root);
    const named = await search.execute({ pattern: 'TODO', path: 'piped.txt' });
    assert.equal(named.isError, true);
    assert.equal(named.output, 'piped.txt is a FIFO (named pipe), not a regular file or a directory; search reads regular files only.');
    const all = await search.execute({ pattern: 'TODO' });
    assert.equal(all.isError, false);
    assert.equal(all.output, 'plain.txt:1: TODO plain');
  });

  it('answers "no matches" without an error', async () => {
    const result = await tool.execute({ pattern: 'nothing-like-this' });
    assert.equal(result.isError, false);
    assert.equal(result.output, 'no matches');
    assert.equal(result.summary, 'no matches');
    assert.equal((await tool.execute({ pattern: 'nothing', path: 'lib' })).output, 'no matches in lib');
  });

  it('caps the output at 500 matches with a note', async () => {
    const result = await tool.execute({ pattern: '^hit', path: 'many.txt' });
    const lines = result.output.split('\n');
    assert.equal(lines.length, 501);
    assert.equal(lines[499], 'many.txt:500: hit 500');
    assert.equal(lines[500], '[500 of 600 matches shown; narrow the pattern or the path to see the rest]');
    assert.equal(result.summary, '600 matches in 1 file');
  });

  it('reports an invalid pattern, a missing path and a path outside as errors', async () => {
    const bad = await tool.execute({ pattern: '(' });
    assert.equal(bad.isError, true);
    assert.match(bad.output, /regular expression/);
    const missing = await tool.execute({ pattern: 'x', path: 'nope' });
    assert.equal(missing.isError, true);
    for (const path of ['..', '.git', '/etc']) {
      assert.equal((await tool.execute({ pattern: 'x', path })).isError, true, path);
    }
    assert.equal((await tool.execute({ pattern: '' })).isError, true);
  });

  it('describes itself with the pattern and the path', () => {
    assert.equal(tool.describe({ pattern: 'TODO', path: 'src' }), 'search "TODO" in src');
    assert.equal(tool.describe({ pattern: 'TODO' }), 'search "TODO"');
    assert.equal(tool.isRepeatSafe({ pattern: 'x' }), true);
    assert.equal(tool.needsApproval({ pattern: 'x' }), false);
  });
});
