// The task tool: a call hands its prompt to the session's subagent runner with the parent's step; a
// stopped subagent throws (the parent's step stays unrecorded and resumes it), bad input or no journal
// is an error result that runs nothing; it changes files (through its subagent), asks no approval itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTaskTool, MAX_SUBAGENTS_AT_ONCE, type SubagentRequest } from '../../src/tools/task.js';

test('a call drives the subagent of its step and answers with its final answer', async () => {
  const asked: SubagentRequest[] = [];
  const signal = new AbortController().signal;
  const task = createTaskTool(async (request) => (asked.push(request), { output: 'found 3 uses', isError: false, summary: 'done' }));
  assert.deepEqual(await task.execute({ description: 'find uses', prompt: 'find every use of add()' }, { step: 7, signal }), { output: 'found 3 uses', isError: false, summary: 'done' });
  assert.deepEqual(asked, [{ description: 'find uses', prompt: 'find every use of add()', step: 7, signal }]);
});

test('a subagent that stops throws through the call, so the step is not recorded', async () => {
  const task = createTaskTool(async () => { throw new Error('stopped by the person'); });
  await assert.rejects(task.execute({ description: 'd', prompt: 'p' }, { step: 1 }), /stopped by the person/);
});

test('invalid input and a call with no journal run nothing and say why', async () => {
  const task = createTaskTool(async () => assert.fail('no subagent'));
  const invalid = await task.execute({ description: 'd' } as never, { step: 1 });
  assert.deepEqual([invalid.isError, invalid.summary], [true, 'error: invalid input']);
  assert.match(invalid.output, /"prompt" is required/);
  assert.deepEqual(await task.execute({ description: 'd', prompt: 'p' }), { output: 'A subagent needs a run journal to work in; this call was not run.', isError: true, summary: 'error: no journal' });
});

test('up to four at once, no approval of its own, files may change, described by its short label', () => {
  const task = createTaskTool(async () => ({ output: '', isError: false, summary: '' }));
  assert.equal(task.maxConcurrent, MAX_SUBAGENTS_AT_ONCE);
  assert.equal(MAX_SUBAGENTS_AT_ONCE, 4);
  const input = { description: 'refactor the parser', prompt: 'p' };
  assert.deepEqual([task.needsApproval(input), task.mayChangeFiles(input), task.isRepeatSafe(input)], [false, true, true]);
  assert.equal(task.describe(input), 'task "refactor the parser"');
  assert.match(task.describe({ description: 'x'.repeat(100), prompt: 'p' }), /^task "x+…"$/);
});
