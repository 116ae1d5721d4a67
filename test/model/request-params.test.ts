// A request as the SDK's stream parameters: the system prompt and the conversation's end marked for
// prompt caching (never a thinking block), tools and thinking only when there are any, the journaled
// request itself left unmarked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestParams } from '../../src/model/request-params.js';
import type { ModelRequest } from '../../src/model/types.js';

const EPHEMERAL = { type: 'ephemeral' };

test('the system prompt and the last message are marked for caching; the request itself is not changed', () => {
  const request: ModelRequest = { model: 'journaled', system: 'be brief', messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }], tools: [{ name: 't', description: 'd', input_schema: {} }], maxTokens: 100, thinking: { budgetTokens: 50 } } as ModelRequest;
  const before = structuredClone(request);
  const params = requestParams(request, 'claude-a') as unknown as Record<string, unknown>;
  assert.deepEqual(Object.keys(params), ['model', 'max_tokens', 'messages', 'system', 'tools', 'thinking']);
  assert.deepEqual(params, {
    model: 'claude-a',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'text', text: 'second', cache_control: EPHEMERAL }] }],
    system: [{ type: 'text', text: 'be brief', cache_control: EPHEMERAL }],
    tools: request.tools,
    thinking: { type: 'enabled', budget_tokens: 50 },
  });
  assert.deepEqual(request, before);
});

test('a last block of blocks gets the mark; thinking at the end gets none; no system, tools or thinking, no keys', () => {
  const blocks = requestParams({ model: 'm', system: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'tool_result', tool_use_id: 'c', content: 'r' }] }], tools: [], maxTokens: 1 } as ModelRequest, 'm') as unknown as { messages: Array<{ content: unknown[] }> } & Record<string, unknown>;
  assert.deepEqual(blocks.messages[0]!.content, [{ type: 'text', text: 'a' }, { type: 'tool_result', tool_use_id: 'c', content: 'r', cache_control: EPHEMERAL }]);
  assert.deepEqual(Object.keys(blocks), ['model', 'max_tokens', 'messages']);
  const thinking = { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }] };
  const ended = requestParams({ model: 'm', system: '', messages: [thinking], tools: [], maxTokens: 1 } as unknown as ModelRequest, 'm') as unknown as { messages: unknown[] };
  assert.deepEqual(ended.messages, [thinking]);
});
