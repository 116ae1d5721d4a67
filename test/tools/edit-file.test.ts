import assert from 'node:assert/strict';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, beforeEach, describe, it } from 'node:test';
import { createEditFileTool } from '../../src/tools/edit-file.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const ORIGINAL = 'function greet(name) {\n  return "hello " + name;\n}\n\nconsole.log(greet("a"));\nconsole.log(greet("b"));\n';

describe('edit_file', () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let outside: string;
  let tool: ReturnType<typeof createEditFileTool>;
  before(async () => {
    repo = await scratch.repo({}, { commit: false });
    outside = scratch.dir('savepoint-outside-');
    writeFileSync(join(outside, 'victim.js'), 'greet\n');
    symlinkSync(join(outside, 'victim.js'), join(repo.root, 'victim-link.js'));
    tool = createEditFileTool(repo.root);
  });
  beforeEach(() => repo.write('src/app.js', ORIGINAL));

  it('replaces a unique string and answers with the unified diff', async () => {
    const result = await tool.execute({ path: 'src/app.js', old_string: '"hello "', new_string: '"hi, "' });
    assert.equal(result.isError, false);
    assert.equal(
      result.output,
      [
        '--- a/src/app.js',
        '+++ b/src/app.js',
        '@@ -1,5 +1,5 @@',
        ' function greet(name) {',
        '-  return "hello " + name;',
        '+  return "hi, " + name;',
        ' }',
        ' ',
        ' console.log(greet("a"));',
        '',
      ].join('\n'),
    );
    assert.equal(result.summary, '1 replacement, +1 -1 lines');
    assert.equal(repo.read('src/app.js'), ORIGINAL.replace('"hello "', '"hi, "'));
  });

  it('fails with a clear message when old_string is missing, leaving the file alone', async () => {
    const result = await tool.execute({ path: 'src/app.js', old_string: 'goodbye', new_string: 'x' });
    assert.equal(result.isError, true);
    assert.match(result.output, /old_string was not found in src\/app\.js/);
    assert.equal(result.summary, 'error: old_string not found');
    assert.equal(repo.read('src/app.js'), ORIGINAL);
  });

  it('fails when old_string is not unique and says how many matches there are', async () => {
    const result = await tool.execute({ path: 'src/app.js', old_string: 'console.log', new_string: 'print' });
    assert.equal(result.isError, true);
    assert.match(result.output, /occurs 2 times/);
    assert.match(result.output, /replace_all/);
    assert.equal(result.summary, 'error: old_string matches 2 times');
    assert.equal(repo.read('src/app.js'), ORIGINAL);
  });

  it('replaces every occurrence with replace_all', async () => {
    const result = await tool.execute({ path: 'src/app.js', old_string: 'greet', new_string: 'welcome', replace_all: true });
    assert.equal(result.isError, false);
    assert.equal(result.summary, '3 replacements, +3 -3 lines');
    assert.equal(repo.read('src/app.js'), ORIGINAL.replaceAll('greet', 'welcome'));
  });

  it('inserts new_string literally, $ patterns included', async () => {
    await tool.execute({ path: 'src/app.js', old_string: '"hello "', new_string: '"$& $1 $$"' });
    assert.match(repo.read('src/app.js'), /return "\$& \$1 \$\$" \+ name;/);
  });

  it('rejects an empty or unchanged old_string and a missing file', async () => {
    assert.equal((await tool.execute({ path: 'src/app.js', old_string: '', new_string: 'x' })).isError, true);
    const same = await tool.execute({ path: 'src/app.js', old_string: 'greet', new_string: 'greet' });
    assert.equal(same.isError, true);
    assert.match(same.output, /the same/);
    const missing = await tool.execute({ path: 'nope.js', old_string: 'a', new_string: 'b' });
    assert.equal(missing.isError, true);
    assert.match(missing.output, /No such file or directory: nope\.js/);
  });

  it('refuses files outside the repository or in .git', async () => {
    for (const path of ['victim-link.js', join(outside, 'victim.js'), '../victim.js', '.git/HEAD']) {
      const result = await tool.execute({ path, old_string: 'greet', new_string: 'pwned' });
      assert.equal(result.isError, true, path);
    }
    assert.equal(readFileSync(join(outside, 'victim.js'), 'utf8'), 'greet\n');
  });

  it('is never repeat-safe and always asks', () => {
    const input = { path: 'src/x.js', old_string: 'a', new_string: 'b' };
    assert.equal(tool.isRepeatSafe(input), false);
    assert.equal(tool.needsApproval(input), true);
    assert.equal(tool.mayChangeFiles(input), true);
    assert.equal(tool.describe(input), 'edit_file src/x.js');
  });

  it('rejects input of the wrong types', async () => {
    const result = await tool.execute({ path: 'src/app.js', old_string: 'a', new_string: 'b', replace_all: 'yes' } as never);
    assert.equal(result.isError, true);
    assert.match(result.output, /"replace_all" must be true or false/);
  });
});
