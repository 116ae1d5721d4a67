// What goes over the wire is what the SDK's own `client.messages.stream` sends for savepoint's
// parameters (request line, headers, body byte for byte), and the answer is read the same: a raw
// HTTP server records both, for a conversation that grows, ends in plain text, carries thinking and
// is then compacted. Header names are compared without their case and order; both go through the
// SDK's fetch, so the same headers come out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropicProvider } from '../../src/model/anthropic.js';
import { ModelError } from '../../src/errors/index.js';
import type { Message, ModelRequest } from '../../src/model/types.js';
import { sdkParams } from '../helpers/sdk-request.js';

// One answer: a text block and a tool call whose input comes in two pieces.
const EVENTS = [
  ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-wire', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Looking.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"a.txt"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7, cache_read_input_tokens: 3 } }],
  ['message_stop', { type: 'message_stop' }],
] as const;
const SSE = EVENTS.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');

// Records each request's bytes as they arrived and answers every one with EVENTS (`broken`: with
// the first event only, then the connection is cut).
async function rawServer(broken = false): Promise<{ url: string; requests: Buffer[]; server: Server }> {
  const requests: Buffer[] = [];
  const server = createServer((socket) => {
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(pending.subarray(0, end).toString())?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        requests.push(pending.subarray(0, end + 4 + length));
        pending = pending.subarray(end + 4 + length);
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${Buffer.byteLength(SSE)}\r\n\r\n${broken ? SSE.slice(0, SSE.indexOf('\n\n') + 2) : SSE}`);
        if (broken) setTimeout(() => socket.destroy(), 20);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests, server };
}

// A recorded request: its request line, its headers by lowercase name, its body's bytes.
function parseRequest(bytes: Buffer): { line: string; headers: Headers; body: Buffer } {
  const end = bytes.indexOf('\r\n\r\n');
  const [line, ...fields] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Headers();
  for (const field of fields) {
    const colon = field.indexOf(':');
    headers.append(field.slice(0, colon), field.slice(colon + 1).trim());
  }
  return { line: line!, headers, body: bytes.subarray(end + 4) };
}

const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

test('the provider sends what messages.stream sent, byte for byte, and reads its answer the same', async () => {
  const { url, requests, server } = await rawServer();
  try {
    const options = { baseURL: url, apiKey: 'wire-key', maxRetries: 1 };
    const sdk = new Anthropic(options);
    const provider = createAnthropicProvider({ ...options, model: 'claude-wire' });
    const base: Omit<ModelRequest, 'messages'> = { model: 'claude-wire', system: 'You are careful.', tools, maxTokens: 512, thinking: { budgetTokens: 256 } };
    const messages: Message[] = [{ role: 'user', content: 'Read a.txt, "quoted" ✓' }];
    const conversations: Message[][] = [];
    for (let turn = 0; turn < 3; turn++) {
      conversations.push([...messages]);
      messages.push({ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'tool_use', id: `toolu_${turn}`, name: 'read_file', input: { path: 'a.txt' } }] });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: `${turn}\n` }] });
    }
    conversations.push([...messages, { role: 'assistant', content: [{ type: 'text', text: 'done' }] }, { role: 'user', content: 'now the follow-up' }]);
    conversations.push([{ role: 'user', content: 'a summary' }, { role: 'user', content: 'now the follow-up' }]);
    for (const conversation of conversations) {
      const request = { ...base, messages: conversation };
      const expected = await sdk.messages.stream(sdkParams(request, 'claude-wire') as unknown as Anthropic.MessageStreamParams).finalMessage();
      const response = await provider.complete(request);
      const [theirs, ours] = requests.splice(0, 2).map(parseRequest);
      assert.equal(ours!.line, theirs!.line);
      assert.deepEqual([...ours!.headers], [...theirs!.headers]);
      assert.ok(ours!.body.equals(theirs!.body), `the body differs:\n${ours!.body}\n${theirs!.body}`);
      assert.deepEqual(response.content, expected.content.map((block) => ({ ...block })));
      assert.deepEqual(response.usage, { inputTokens: 10, outputTokens: 7, cacheCreationInputTokens: 0, cacheReadInputTokens: 3 });
      assert.equal(response.stopReason, expected.stop_reason);
    }
  } finally {
    server.close();
  }
});

test('a connection cut in the middle of an answer is a ModelError, as it was through messages.stream', async () => {
  const { url, server } = await rawServer(true);
  try {
    const provider = createAnthropicProvider({ baseURL: url, apiKey: 'wire-key', maxRetries: 0, model: 'claude-wire' });
    const error = await provider.complete({ model: 'claude-wire', system: '', tools: [], maxTokens: 16, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => assert.fail('expected a ModelError'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ModelError, String(error));
    assert.equal(error.data.kind, 'other');
    assert.equal(error.data.apiMessage, 'terminated', 'the words of fetch for a connection cut in a body');
  } finally {
    server.close();
  }
});
