// The live provider through the real SDK, against the fake Anthropic server on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createAnthropicProvider, hasAnthropicCredentials } from '../../src/model/anthropic.js';
import { ModelError } from '../../src/errors/index.js';
import type { Message, ModelRequest } from '../../src/model/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';

const readFileTool = { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };

function request(messages: Message[] = [{ role: 'user', content: 'Fix the failing test.' }]): ModelRequest {
  return { model: 'claude-test', system: 'You are a careful engineer.', messages, tools: [readFileTool], maxTokens: 1024 };
}

async function withFake(options: Parameters<typeof startFakeAnthropic>[0], body: (fake: FakeAnthropic) => Promise<void>): Promise<void> {
  const fake = await startFakeAnthropic(options);
  try {
    await body(fake);
  } finally {
    await fake.close();
  }
}

test('streams text through onText in pieces and returns the whole message', async () => {
  const text = 'I will look at the failing test first, then fix the off-by-one in the loop.';
  await withFake({ turns: [{ text }] }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', model: 'claude-test' });
    const pieces: string[] = [];
    const response = await provider.complete(request(), { onText: (piece) => pieces.push(piece) });
    assert.ok(pieces.length > 1, `expected several pieces, got ${pieces.length}`);
    assert.equal(pieces.join(''), text);
    assert.deepEqual(response.content, [{ type: 'text', text }]);
    assert.equal(response.stopReason, 'end_turn');
    assert.equal(response.model, 'claude-test');
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.stream, true);
    assert.deepEqual(fake.requests[0]!.system, [{ type: 'text', text: 'You are a careful engineer.', cache_control: { type: 'ephemeral' } }]);
    assert.equal(fake.requests[0]!.max_tokens, 1024);
    // SDK 1.x sends an API key as a bearer token too.
    assert.equal(fake.headers[0]!.authorization, 'Bearer test-key');
  });
});

test('returns tool_use blocks with their input parsed, and the turn that matches the conversation', async () => {
  const turns = [
    { text: 'Reading it.', tools: [{ name: 'read_file', input: { path: 'test.js', limit: 20 } }] },
    { text: 'Fixed.' },
  ];
  await withFake({ turns }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const first = await provider.complete(request());
    assert.equal(first.stopReason, 'tool_use');
    assert.deepEqual(first.content[1], { type: 'tool_use', id: 'toolu_s0_0', name: 'read_file', input: { path: 'test.js', limit: 20 } });

    const second = await provider.complete(
      request([
        { role: 'user', content: 'Fix the failing test.' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_s0_0', content: '1: test("x")' }] },
      ]),
    );
    assert.deepEqual(second.content, [{ type: 'text', text: 'Fixed.' }]);
    assert.equal(second.stopReason, 'end_turn');
    assert.equal((fake.requests[1]!.tools as unknown[]).length, 1);
  });
});

test('maps usage, and reports cache counters a server leaves out as 0', async () => {
  const turns = [
    { text: 'One.', usage: { inputTokens: 1200, outputTokens: 80, cacheCreationInputTokens: 300, cacheReadInputTokens: 900 } },
    { text: 'Two.', usage: { inputTokens: 50, outputTokens: 7 } },
  ];
  await withFake({ turns }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const first = await provider.complete(request());
    assert.deepEqual(first.usage, { inputTokens: 1200, outputTokens: 80, cacheCreationInputTokens: 300, cacheReadInputTokens: 900 });
    const second = await provider.complete(request([{ role: 'user', content: 'a' }, { role: 'assistant', content: first.content }, { role: 'user', content: 'b' }]));
    assert.deepEqual(second.usage, { inputTokens: 50, outputTokens: 7, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
  });
});

test('a 529 overloaded answer is retried by the SDK and the call succeeds', async () => {
  await withFake({ turns: [{ text: 'Made it.' }] }, async (fake) => {
    fake.failNext(529);
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 2 });
    const response = await provider.complete(request());
    assert.deepEqual(response.content, [{ type: 'text', text: 'Made it.' }]);
    assert.equal(fake.requests.length, 2);
  });
});

test('a 500 that persists through the retries becomes a ModelError with a clear message', async () => {
  await withFake({}, async (fake) => {
    fake.failNext(500, 10);
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 2 });
    const error = await provider.complete(request()).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError);
    assert.equal(error.code, 'EMODEL');
    assert.equal(error.data.status, 500);
    assert.equal(error.data.retries, 2);
    assert.equal(fake.requests.length, 3);
    assert.match(error.message, /answered 500 api_error: "Internal server error" \(after 2 retries\)/);
    assert.match(error.message, new RegExp(fake.url.replace(/[.]/g, '\\.')));
    assert.match(error.message, /run the same command again/);
    assert.doesNotMatch(error.message, /\n/);
  });
});

test('a 401 is not retried and says the key was refused', async () => {
  await withFake({ apiKey: 'the-right-key' }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'a-wrong-key', maxRetries: 2 });
    const error = await provider.complete(request()).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError);
    assert.equal(error.data.status, 401);
    assert.equal(error.data.retries, 0);
    assert.equal(fake.requests.length, 1);
    assert.match(error.message, /ANTHROPIC_API_KEY/);
    assert.match(error.message, /savepoint demo/);
  });
});

test('an authToken is sent as a bearer token', async () => {
  await withFake({ apiKey: 'token-123' }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, authToken: 'token-123' });
    await provider.complete(request());
    assert.equal(fake.headers[0]!.authorization, 'Bearer token-123');
  });
});

test('an overloaded error in the middle of a streamed answer is asked again, with a notice of the wait', async () => {
  await withFake({ turns: [{ text: 'Answered the second time.' }] }, async (fake) => {
    fake.failNext(529, 1, { midStream: true });
    const notices: unknown[] = [];
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', onNotice: (notice) => notices.push(notice) });
    const response = await provider.complete(request());
    assert.deepEqual(response.content, [{ type: 'text', text: 'Answered the second time.' }]);
    assert.equal(fake.requests.length, 2);
    assert.equal(notices.length, 1);
    assert.match(JSON.stringify(notices[0]), /"notice":"retry-wait".*"reason":"the answer broke off \(overloaded_error\)".*"attempt":1,"attempts":2/);
  });
});

test('an error in the middle of every streamed answer becomes a ModelError after the retries', async () => {
  await withFake({}, async (fake) => {
    fake.failNext(529, 3, { midStream: true });
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const error = await provider.complete(request()).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError);
    assert.equal(error.data.kind, 'stream');
    assert.equal(error.data.type, 'overloaded_error');
    assert.equal(error.data.retries, 2);
    assert.equal(fake.requests.length, 3, 'asked three times: the first and two retries');
    assert.match(error.message, /overloaded/);
  });
});

test('an error event the SDK would not retry as a status (invalid_request_error) is not asked again', async () => {
  await withFake({}, async (fake) => {
    fake.failNext(400, 1, { midStream: true, type: 'invalid_request_error', message: 'bad' });
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const error = await provider.complete(request()).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError);
    assert.equal(error.data.kind, 'stream');
    assert.equal(fake.requests.length, 1);
  });
});

test('a refused connection becomes a ModelError that names the base URL', async () => {
  const url = await unusedLocalURL();
  const provider = createAnthropicProvider({ baseURL: url, apiKey: 'test-key', maxRetries: 1 });
  const error = await provider.complete(request()).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
  assert.ok(error instanceof ModelError);
  assert.equal(error.data.kind, 'connection');
  assert.equal(error.data.code, 'ECONNREFUSED');
  assert.ok(error.message.includes(url), error.message);
  assert.match(error.message, /ANTHROPIC_BASE_URL/);
});

test('aborting a call stops the stream and rejects with the abort reason', async () => {
  await withFake({ turns: [{ text: 'one two three four five six seven eight', delayMs: 5000 }] }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const controller = new AbortController();
    // Aborted on the first word: the other seven come across five seconds, and none of them arrives.
    const words: string[] = [];
    const onText = (text: string) => {
      words.push(text);
      controller.abort();
    };
    const error = await provider.complete(request(), { signal: controller.signal, onText }).then(() => assert.fail('expected an abort'), (e: unknown) => e);
    assert.equal((error as Error).name, 'AbortError');
    assert.doesNotMatch(words.join(''), /eight/, 'the abort did not wait for the answer');
  });
});

test('an error thrown by onText is passed on as it is, not blamed on the model', async () => {
  await withFake({ turns: [{ text: 'some streamed words here' }] }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const broken = new RangeError('terminal is gone');
    await assert.rejects(provider.complete(request(), { onText: () => { throw broken; } }), (e: unknown) => e === broken);
  });
});

test('hasAnthropicCredentials looks for a key or a token in the environment', () => {
  assert.equal(hasAnthropicCredentials({}), false);
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_API_KEY: '  ' }), false);
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_API_KEY: 'sk-ant-x' }), true);
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_AUTH_TOKEN: 'tok' }), true);
});

// A local address nothing listens on: a port the system handed out and then closed.
async function unusedLocalURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

test('marks the system prompt and the end of the conversation for prompt caching, without touching the request it was given', async () => {
  await withFake({ turns: [{ text: 'ok' }, { text: 'ok again' }] }, async (fake) => {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
    const conversation = request();
    const before = JSON.stringify(conversation);
    await provider.complete(conversation);
    assert.equal(JSON.stringify(conversation), before, 'the journaled request is not changed');
    const sent = fake.requests[0]! as { messages: Array<{ content: unknown }> };
    const last = sent.messages.at(-1)!.content as Array<Record<string, unknown>>;
    assert.deepEqual(last.at(-1)!.cache_control, { type: 'ephemeral' });
    // A conversation ending in tool results: the breakpoint goes on the last result.
    const withResult = {
      ...conversation,
      messages: [
        ...conversation.messages,
        { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'read_file', input: { path: 'a' } }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'text' }] },
      ],
    };
    await provider.complete(withResult);
    const blocks = (fake.requests[1]! as { messages: Array<{ content: Array<Record<string, unknown>> }> }).messages.at(-1)!.content;
    assert.deepEqual(blocks, [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'text', cache_control: { type: 'ephemeral' } }]);
    const earlier = (fake.requests[1]! as { messages: Array<{ content: unknown }> }).messages[0]!.content;
    assert.ok(!JSON.stringify(earlier).includes('cache_control'), 'only the last message is marked');
  });
});
