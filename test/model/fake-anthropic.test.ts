// The fake Anthropic server itself, seen through the SDK: JSON mode, turn functions, request checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';

test('answers non-streaming requests as one JSON message, and records each body', async () => {
  const fake = await startFakeAnthropic({ turns: [{ text: 'Plain JSON.', tools: [{ name: 'list_files', input: {} }] }] });
  try {
    const client = new Anthropic({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(message.model, 'claude-x');
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content, [
      { type: 'text', text: 'Plain JSON.' },
      { type: 'tool_use', id: 'toolu_s0_0', name: 'list_files', input: {} },
    ]);
    assert.deepEqual(fake.requests[0]!.messages, [{ role: 'user', content: 'hi' }]);
  } finally {
    await fake.close();
  }
});

test('a turn function sees the request body', async () => {
  const fake = await startFakeAnthropic({ turns: (body) => ({ text: `You sent ${body.messages.length} message(s).` }), model: 'fake-model' });
  try {
    const client = new Anthropic({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    const message = await client.messages.stream({ model: 'claude-x', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    assert.deepEqual(message.content, [{ type: 'text', text: 'You sent 1 message(s).' }]);
    assert.equal(message.model, 'fake-model');
  } finally {
    await fake.close();
  }
});

test('requests the real API would refuse get a 400 invalid_request_error', async () => {
  const fake = await startFakeAnthropic();
  try {
    const client = new Anthropic({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'claude-x', max_tokens: 50, messages: [] }), { status: 400, type: 'invalid_request_error' });
  } finally {
    await fake.close();
  }
});
