// Every tool's guarantees, given by defineTool: input checked before it runs (an invalid call runs
// nothing, asks nothing and changes nothing), a failure handed back as an error result (never
// thrown), a description that never throws; and the plain words of a file error, naming the path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/errors/index.js';
import { defineTool, errorMessage, toolError, toolOk } from '../../src/tools/define-tool.js';
import type { ToolInputSchema } from '../../src/tools/types.js';

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false } as ToolInputSchema;

function tool(overrides: Partial<Parameters<typeof defineTool<{ path: string }>>[0]> = {}) {
  let ran = 0;
  const built = defineTool<{ path: string }>({
    name: 'touch',
    description: 'touches a file',
    inputSchema: schema,
    describe: (input) => `touch ${input.path!.toUpperCase()}`,
    run: async (input) => (ran++, toolOk(`touched ${input.path}`, 'ok')),
    ...overrides,
  });
  return { built, ran: () => ran };
}

test('valid input runs; invalid input never does and comes back as an error result naming the problem', async () => {
  const { built, ran } = tool();
  assert.deepEqual(await built.execute({ path: 'a' }), { output: 'touched a', isError: false, summary: 'ok' });
  assert.deepEqual(await built.execute({ path: 1 } as never), { output: 'Invalid input: "path" must be a string, not number 1. Parameters: path.', isError: true, summary: 'error: invalid input' });
  assert.equal(ran(), 1);
});

test('a tool that throws hands back an error result with its message', async () => {
  const { built } = tool({ run: async () => { throw Object.assign(new Error('raw'), { code: 'ENOENT' }); } });
  assert.deepEqual(await built.execute({ path: 'a' }), { output: 'No such file or directory', isError: true, summary: 'error: No such file or directory' });
});

test('defaults: repeat-safe, no approval, no file changes; an invalid call is all three whatever the tool says', () => {
  const plain = tool().built;
  assert.deepEqual([plain.isRepeatSafe({ path: 'a' }), plain.needsApproval({ path: 'a' }), plain.mayChangeFiles({ path: 'a' }), plain.changedPaths?.({ path: 'a' })], [true, false, false, undefined]);
  const writer = tool({ isRepeatSafe: () => false, needsApproval: () => true, mayChangeFiles: () => true, changedPaths: (input) => [input.path] }).built;
  assert.deepEqual([writer.isRepeatSafe({ path: 'a' }), writer.needsApproval({ path: 'a' }), writer.mayChangeFiles({ path: 'a' }), writer.changedPaths?.({ path: 'a' })], [false, true, true, ['a']]);
  const invalid = {} as { path: string };
  assert.deepEqual([writer.isRepeatSafe(invalid), writer.needsApproval(invalid), writer.mayChangeFiles(invalid), writer.changedPaths?.(invalid)], [true, false, false, undefined]);
  const throwing = tool({ needsApproval: () => { throw new Error('x'); }, changedPaths: () => { throw new Error('x'); } }).built;
  assert.deepEqual([throwing.needsApproval({ path: 'a' }), throwing.changedPaths?.({ path: 'a' })], [false, undefined], 'a predicate that throws falls back');
});

test('a description that cannot be made is the tool name', () => {
  const { built } = tool();
  assert.equal(built.describe({ path: 'a' }), 'touch A');
  assert.equal(built.describe({} as never), 'touch');
  assert.equal(built.describe(null as never), 'touch');
});

test("file errors in plain words naming the model's path; savepoint's own errors as they are", () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: raw`), { code });
  assert.equal(errorMessage(errno('ENOENT'), 'src/a.ts'), 'No such file or directory: src/a.ts');
  assert.equal(errorMessage(errno('EISDIR'), 'src'), 'Is a directory, not a file: src (use list_files to see what it holds)');
  assert.equal(errorMessage(errno('ENOTDIR'), 'a/b'), 'A part of the path is a file, not a directory: a/b');
  assert.equal(errorMessage(errno('EPERM')), 'Permission denied');
  assert.equal(errorMessage(errno('EIO')), 'EIO: raw');
  assert.equal(errorMessage(new UsageError('Bad flag.')), 'Bad flag.');
  assert.equal(errorMessage('a string'), 'a string');
  assert.match(toolError('x'.repeat(100)).summary, /^error: x+…?$/);
  assert.ok(toolError('x'.repeat(100)).summary.length <= 60, 'a summary is one short line');
});
