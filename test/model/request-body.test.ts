// The request body built a turn at a time is, byte for byte, what serializing the whole request
// gives (the SDK's own encoding), whatever the conversation does between two requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestBodies } from '../../src/model/request-body.js';
import type { Message, ModelRequest } from '../../src/model/types.js';
import { sdkParams } from '../helpers/sdk-request.js';

const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

// The body as the SDK's messages.stream sent it: JSON.stringify of its params with `stream: true`.
const wholeBody = (request: ModelRequest, model: string): string => JSON.stringify({ ...sdkParams(request, model), stream: true });

test('a growing conversation: each body equals the whole request serialized', () => {
  const bodies = new RequestBodies();
  const messages: Message[] = [{ role: 'user', content: 'Fix the "failing" test ✓.' }];
  const base = { model: 'claude-test', system: 'You are careful.\n', tools, maxTokens: 1024 };
  for (let turn = 0; turn < 6; turn++) {
    const request = { ...base, messages: [...messages] };
    assert.equal(bodies.body(request, 'claude-test'), wholeBody(request, 'claude-test'), `turn ${turn}`);
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `turn ${turn}` }, { type: 'tool_use', id: `toolu_${turn}`, name: 'read_file', input: { path: 'a\u2028b' } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: 'x\n'.repeat(turn), ...(turn % 2 ? { is_error: true } : {}) }] });
  }
});

test('a replaced conversation (compaction), a follow-up in plain text, thinking at the end, and a changed prompt', () => {
  const bodies = new RequestBodies();
  const task: Message = { role: 'user', content: 'the task' };
  const answer: Message = { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }] };
  const followUp: Message = { role: 'user', content: 'and then this' };
  const base: Omit<ModelRequest, 'messages'> = { model: 'm', system: 'S', tools, maxTokens: 64, thinking: { budgetTokens: 32 } };
  const requests: ModelRequest[] = [
    { ...base, messages: [task] },
    { ...base, messages: [task, answer] }, // ends in thinking: left unmarked
    { ...base, messages: [task, answer, followUp] },
    { ...base, messages: [{ role: 'user', content: 'summary of it all' }, followUp] }, // compacted
    { ...base, messages: [task] }, // shorter than before
    { ...base, system: '', tools: [], thinking: undefined, messages: [task, answer, followUp] },
    { ...base, messages: [] },
    { ...base, messages: [task, { role: 'user', content: [] }] }, // an empty last turn is left as it is
  ];
  for (const [i, request] of requests.entries()) assert.equal(bodies.body(request, 'claude-x'), wholeBody(request, 'claude-x'), `request ${i}`);
});

test('the request it is given is not changed', () => {
  const bodies = new RequestBodies();
  const request: ModelRequest = { model: 'm', system: 'S', tools, maxTokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const before = JSON.stringify(request);
  bodies.body(request, 'm');
  assert.equal(JSON.stringify(request), before);
});
