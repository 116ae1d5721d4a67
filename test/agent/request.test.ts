// A model step's identity is the digest of its whole request; the loop keeps it up to date message
// by message. The two must agree exactly, or every journal written before would diverge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConversationDigest, modelStepInput } from '../../src/agent/request.js';
import type { Message, ModelRequest } from '../../src/model/types.js';

test('the incremental conversation digest equals the digest of the whole request at every turn', () => {
  const fixed = { model: 'claude-x', system: 'be careful "quoted"\n', tools: [{ name: 't', description: 'd', input_schema: { type: 'object', properties: { b: 1, a: 2 } } }], maxTokens: 8192 };
  const conversation: Message[] = [
    { role: 'user', content: 'fix the bug ✓' },
    { role: 'assistant', content: [{ type: 'text', text: 'looking' }, { type: 'tool_use', id: 'toolu_1', name: 't', input: { z: 1, a: [1, { y: 2, b: 3 }] } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x'.repeat(10_000), is_error: true }] },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
  const digest = new ConversationDigest(fixed);
  conversation.forEach((message, i) => {
    digest.push(message);
    const request: ModelRequest = { ...fixed, messages: conversation.slice(0, i + 1) };
    assert.deepEqual(digest.stepInput(fixed.model, i + 1), modelStepInput(request, i + 1));
  });
});

test('the digest changes when anything that shapes the request changes', () => {
  const base = { model: 'm', system: 's', tools: [], maxTokens: 10 };
  const of = (fixed: typeof base, text: string) => {
    const digest = new ConversationDigest(fixed);
    digest.push({ role: 'user', content: text });
    return digest.stepInput(fixed.model, 1).request;
  };
  const reference = of(base, 'task');
  assert.notEqual(of({ ...base, system: 's2' }, 'task'), reference);
  assert.notEqual(of({ ...base, maxTokens: 11 }, 'task'), reference);
  assert.notEqual(of(base, 'task!'), reference);
  assert.equal(of(base, 'task'), reference);
});
