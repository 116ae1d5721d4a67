// The diff an approval question shows for edit_file and write_file, made by git on the file as it is
// now: a change in place, a new file from /dev/null, no change said so, and instead of a diff why the
// call will fail (outside the repository, no such file, an edit that does not match, a directory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { editPreview } from '../../../src/cli/view/edit-preview.js';
import { useScratch } from '../../helpers/scratch.js';

const scratch = useScratch();

test("an edit's hunk as git prints it, the file named; a write of a new file from /dev/null", async () => {
  const repo = await scratch.repo({ 'src/a.ts': 'one\ntwo\nthree\n' });
  const edit = await editPreview(repo.root, 'edit_file', { path: 'src/a.ts', old_string: 'two', new_string: 'TWO' });
  assert.deepEqual(edit, { path: 'src/a.ts', created: false, lines: ['--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1,3 +1,3 @@', ' one', '-two', '+TWO', ' three'] });
  const write = await editPreview(repo.root, 'write_file', { path: 'new.txt', content: 'hi\n' });
  assert.deepEqual(write, { path: 'new.txt', created: true, lines: ['--- /dev/null', '+++ b/new.txt', '@@ -0,0 +1 @@', '+hi'] });
  assert.deepEqual(await editPreview(repo.root, 'write_file', { path: 'src/a.ts', content: 'one\ntwo\nthree\n' }), { path: 'src/a.ts', created: false, lines: ['(no change: the file already holds exactly this)'] });
});

test('a call that will fail says why instead of a diff; other tools get no preview', async () => {
  const repo = await scratch.repo({ 'a.txt': 'x\n' });
  mkdirSync(join(repo.root, 'dir'));
  const note = async (tool: string, input: Record<string, unknown>) => ((await editPreview(repo.root, tool, input)) as { note: string }).note;
  assert.match(await note('edit_file', { path: '../out.txt', old_string: 'a', new_string: 'b' }), /^it will fail: The path "\.\.\/out\.txt" resolves outside the repository/);
  assert.equal(await note('edit_file', { path: 'missing.txt', old_string: 'a', new_string: 'b' }), 'it will fail: missing.txt does not exist (edit_file changes an existing file)');
  assert.match(await note('edit_file', { path: 'a.txt', old_string: 'nope', new_string: 'b' }), /^it will fail: /);
  assert.equal(await note('write_file', { path: 'dir', content: 'x' }), 'it will fail: dir is a directory');
  assert.equal(await editPreview(repo.root, 'run_bash', { command: 'ls' }), undefined);
});
