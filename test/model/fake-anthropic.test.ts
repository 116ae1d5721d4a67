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

test('like a real model, it stops at max_tokens with partial tool input, refuses a prompt above its window, and sends signed thinking', async () => {
  const fake = await startFakeAnthropic({ turns: [{ text: 'abcd', tools: [{ name: 'run_bash', input: { command: 'echo hi', timeout_ms: 60000 } }] }], contextWindow: 200 });
  try {
    const client = new Anthropic({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    const cut = await client.messages.create({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(cut.stop_reason, 'max_tokens');
    assert.equal(cut.usage.output_tokens, 10);
    assert.deepEqual(cut.content.at(-1), { type: 'tool_use', id: 'toolu_s0_0', name: 'run_bash', input: { command: 'echo hi' } });

    await assert.rejects(client.messages.create({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'x'.repeat(1000) }] }), (error: { status?: number; error?: { error?: { message?: string } } }) => {
      assert.equal(error.status, 400);
      assert.match(error.error?.error?.message ?? '', /^prompt is too long: \d+ tokens > 200 maximum$/);
      return true;
    });

    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    for (const streamed of [false, true]) {
      const params = { model: 'claude-x', max_tokens: 2000, thinking, messages: [{ role: 'user' as const, content: 'hi' }] };
      const message = streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      assert.equal(message.content[0]!.type, 'thinking');
      const block = message.content[0] as { thinking: string; signature: string };
      assert.equal(block.thinking, 'Thinking about turn 0.');
      assert.match(block.signature, /^sig_/);
      // Sent back changed, it is refused as the API refuses it.
      const changed = [{ role: 'user' as const, content: 'hi' }, { role: 'assistant' as const, content: [{ ...block, type: 'thinking' as const, thinking: 'edited' }, ...message.content.slice(1)] }, { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_s0_0', content: 'ok' }] }];
      await assert.rejects(client.messages.create({ ...params, messages: changed }), { status: 400 });
    }
  } finally {
    await fake.close();
  }
});
