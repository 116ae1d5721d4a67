// A subagent's run id: derived from its parent's and the step, valid and within 100 characters
// whatever the parent's length; a prefix of a parent's id names the parent, not its subagents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidRunId } from '../../src/journal/entry.js';
import { resolveRunId, subagentRunId } from '../../src/journal/run-id.js';

test('a subagent id is <parent>.task<step>, valid, and a long parent keeps its head and a digest', () => {
  assert.equal(subagentRunId('fix-login-3fa9c1', 4), 'fix-login-3fa9c1.task4');
  const long = `${'a'.repeat(95)}-123`;
  const [one, two] = [subagentRunId(long, 12), subagentRunId(`${'a'.repeat(95)}-124`, 12)];
  for (const id of [one, two]) {
    assert.ok(id.length <= 100 && isValidRunId(id), id);
    assert.ok(id.endsWith('.task12'));
  }
  assert.notEqual(one, two, 'two long parents alike in their head differ');
});

test('a prefix of a parent id names the parent; one of two unrelated runs is still ambiguous', () => {
  const ids = ['fix-login-3fa9c1', 'fix-login-3fa9c1.task2', 'fix-login-3fa9c1.task3'];
  assert.equal(resolveRunId('fix-login', ids), 'fix-login-3fa9c1');
  assert.equal(resolveRunId('fix-login-3fa9c1.task3', ids), 'fix-login-3fa9c1.task3');
  assert.throws(() => resolveRunId('fix', [...ids, 'fix-other-000000']));
});
