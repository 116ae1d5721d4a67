// Answers the loop must not act on: a cut-off answer's calls are not run (each told why), a cut-off
// text is continued, a refusal's calls are not run and its text says it refused, a malformed call
// gets its error instead of running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { continueText, cutOffResults, invalidCallResult, MAX_TOKENS, notRunResults, REFUSAL, refusalResults, refusalText } from '../../src/agent/stop-reasons.js';
import type { ModelResponse, ToolUseBlock } from '../../src/model/types.js';

const call = (id: string, name = 'write_file'): ToolUseBlock => ({ type: 'tool_use', id, name, input: {} });
const response = (stopReason: string, invalidCalls?: Record<string, string>) => ({ model: 'm', content: [], stopReason, usage: { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 }, ...(invalidCalls ? { invalidCalls } : {}) }) as ModelResponse;

test('the calls of an answer cut off at max_tokens each get an error result naming the limit and the tool', () => {
  const results = cutOffResults([call('a'), call('b', 'run_bash')], 4096);
  assert.deepEqual(results.map((r) => [r.tool_use_id, r.is_error]), [['a', true], ['b', true]]);
  assert.match(results[1]!.content as string, /^Your answer was cut off at the max_tokens limit \(4096 tokens\) before this run_bash call was complete, so it was not run/);
  assert.deepEqual(notRunResults(response(MAX_TOKENS), [call('a')], 4096), cutOffResults([call('a')], 4096));
});

test("a refusal's calls are not run, and its final answer says it was a refusal", () => {
  assert.deepEqual(notRunResults(response(REFUSAL), [call('a')], 1), refusalResults([call('a')]));
  assert.match(refusalResults([call('a', 'edit_file')])[0]!.content as string, /stopped as a refusal \(stop reason "refusal"\), so this edit_file call was not run/);
  assert.equal(refusalText('I cannot'), 'I cannot\n\n(The model refused: stop reason "refusal".)');
  assert.equal(refusalText(''), '(The model refused to answer: stop reason "refusal".)');
});

test('calls of a finished answer run, and an answer without calls needs no results', () => {
  assert.equal(notRunResults(response('tool_use'), [call('a')], 1), undefined);
  assert.equal(notRunResults(response(MAX_TOKENS), [], 1), undefined);
});

test('a cut-off text is continued where it stopped', () => {
  assert.equal(continueText(100), 'Your answer was cut off at the max_tokens limit (100 tokens). Continue exactly where it stopped, without repeating what you already wrote.');
});

test('a malformed call gets its recorded error instead of running; a well-formed one, and an inherited name, none', () => {
  const answer = response('tool_use', { bad: 'The call has no name.' });
  assert.deepEqual(invalidCallResult(call('bad'), answer), { type: 'tool_result', tool_use_id: 'bad', is_error: true, content: 'The call has no name.' });
  assert.equal(invalidCallResult(call('good'), answer), undefined);
  assert.equal(invalidCallResult(call('toString'), answer), undefined, 'only its own keys');
  assert.equal(invalidCallResult(call('bad'), response('tool_use')), undefined);
});
