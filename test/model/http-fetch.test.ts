// The model client's fetch on node:http (src/model/http-fetch.ts), through the provider and the
// real SDK against the fake Anthropic server, with a TCP relay in front of the fake where a test
// needs to count connections or cut them: connections kept alive across turns, one the server
// closed while idle (and one it closes just as the next request comes), errors with a body,
// refused connections, aborts, the SDK's timeout, redirects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { APIConnectionError, APIConnectionTimeoutError } from '@anthropic-ai/sdk';
import { createAnthropicProvider } from '../../src/model/anthropic.js';
import { createHttpFetch } from '../../src/model/http-fetch.js';
import { ModelError } from '../../src/errors/index.js';
import type { Message, ModelRequest } from '../../src/model/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';

const readFile = { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } };
const turns = [0, 1, 2].map((i) => ({ text: `Reading ${i}.`, tools: [{ name: 'read_file', input: { path: `${i}.txt` } }] }));

// The conversation after `done` tool turns, as the agent loop grows it.
function conversation(done: number): ModelRequest {
  const messages: Message[] = [{ role: 'user', content: 'Read the files.' }];
  for (let i = 0; i < done; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_s${i}_0`, name: 'read_file', input: { path: `${i}.txt` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_s${i}_0`, content: `${i}\n` }] });
  }
  return { model: 'claude-test', system: 'Be brief.', tools: [readFile], maxTokens: 1024, messages };
}

// A TCP relay to `port` that counts the connections made to it. `cutNext` arms it to close the
// client's connection, without passing anything on, when the next request arrives on one that has
// already been answered (a server that closes an idle connection just as the client reuses it);
// `cutIdle` closes every open client connection now (a server's keep-alive timeout).
interface Relay {
  url: string;
  connections: number;
  cutNext(): void;
  cutIdle(): Promise<void>;
  close(): Promise<void>;
}

async function relay(port: number): Promise<Relay> {
  const open = new Set<Socket>();
  let cut = false;
  const state = { connections: 0 };
  const server: Server = createServer((client) => {
    state.connections++;
    open.add(client);
    const upstream = connect(port, '127.0.0.1');
    let answered = false;
    upstream.on('data', (chunk) => {
      answered = true;
      client.write(chunk);
    });
    client.on('data', (chunk) => {
      if (cut && answered) {
        cut = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    const end = () => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    get connections() {
      return state.connections;
    },
    cutNext: () => void (cut = true),
    async cutIdle() {
      for (const socket of open) socket.end();
      // Until the client has seen the connections close.
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function withRelay(body: (fake: FakeAnthropic, relay: Relay) => Promise<void>): Promise<void> {
  const fake = await startFakeAnthropic({ turns });
  const front = await relay(Number(new URL(fake.url).port));
  try {
    await body(fake, front);
  } finally {
    await front.close();
    await fake.close();
  }
}

test('one connection carries every turn of a conversation', async () => {
  await withRelay(async (fake, front) => {
    const provider = createAnthropicProvider({ baseURL: front.url, apiKey: 'test-key', maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const pieces: string[] = [];
      const answer = await provider.complete(conversation(i), { onText: (text) => pieces.push(text) });
      assert.equal(pieces.join(''), `Reading ${i}.`);
      assert.deepEqual(answer.content[1], { type: 'tool_use', id: `toolu_s${i}_0`, name: 'read_file', input: { path: `${i}.txt` } });
    }
    assert.equal(fake.requests.length, 3);
    assert.equal(front.connections, 1);
    assert.equal(fake.headers[0]!['x-stainless-helper-method'], 'stream');
    assert.equal(fake.headers[0]!.connection, 'keep-alive');
  });
});

test('a connection the server closed while idle is not used again: the next turn opens a new one', async () => {
  await withRelay(async (fake, front) => {
    const provider = createAnthropicProvider({ baseURL: front.url, apiKey: 'test-key', maxRetries: 0 });
    await provider.complete(conversation(0));
    await front.cutIdle();
    const answer = await provider.complete(conversation(1));
    assert.deepEqual(answer.content[0], { type: 'text', text: 'Reading 1.' });
    assert.equal(front.connections, 2);
    assert.equal(fake.requests.length, 2);
  });
});

test('a reused connection the server closes as the request arrives is retried once on a new one, not failed', async () => {
  await withRelay(async (fake, front) => {
    // No SDK retries: the request must get through by the fetch's own resend.
    const provider = createAnthropicProvider({ baseURL: front.url, apiKey: 'test-key', maxRetries: 0 });
    await provider.complete(conversation(0));
    front.cutNext();
    const answer = await provider.complete(conversation(1));
    assert.deepEqual(answer.content[0], { type: 'text', text: 'Reading 1.' });
    assert.equal(front.connections, 2);
    assert.equal(fake.requests.length, 2, 'the cut request never reached the server, its resend did');
  });
});

test('a 400 "prompt is too long" comes back as the API said it, not retried', async () => {
  const fake = await startFakeAnthropic({ contextWindow: 10 });
  try {
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 2 });
    const error = await provider.complete(conversation(0)).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError, String(error));
    assert.equal(error.data.status, 400);
    assert.equal(error.data.type, 'invalid_request_error');
    assert.match(error.data.apiMessage ?? '', /^prompt is too long: \d+ tokens > 10 maximum$/);
    assert.match(error.data.requestId ?? '', /^req_fake_/);
    assert.equal(error.data.retries, 0);
    assert.equal(fake.requests.length, 1);
  } finally {
    await fake.close();
  }
});

test('429 and 529 are retried by the SDK on the same connection, and one that persists says so', async () => {
  const fake = await startFakeAnthropic({ turns });
  const front = await relay(Number(new URL(fake.url).port));
  try {
    const provider = createAnthropicProvider({ baseURL: front.url, apiKey: 'test-key', maxRetries: 2 });
    fake.failNext(429);
    fake.failNext(529);
    const answer = await provider.complete(conversation(0));
    assert.deepEqual(answer.content[0], { type: 'text', text: 'Reading 0.' });
    assert.equal(fake.requests.length, 3);
    fake.failNext(429, 3);
    const error = await provider.complete(conversation(1)).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError, String(error));
    assert.equal(error.data.status, 429);
    assert.equal(error.data.retries, 2);
    assert.equal(fake.requests.length, 6);
    assert.equal(front.connections, 1, 'an error answer leaves its connection usable');
  } finally {
    await front.close();
    await fake.close();
  }
});

test('a refused connection rejects as fetch does, which the SDK reports as an APIConnectionError', async () => {
  const port = await unusedPort();
  const error = await createHttpFetch()(`http://127.0.0.1:${port}/v1/messages`, { method: 'POST', body: '{}' }).then(() => assert.fail('expected a rejection'), (e: unknown) => e);
  assert.ok(error instanceof TypeError);
  assert.equal(error.message, 'fetch failed');
  assert.equal((error.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
  const provider = createAnthropicProvider({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'test-key', maxRetries: 0 });
  const failed = await provider.complete(conversation(0)).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
  assert.ok(failed instanceof ModelError);
  assert.ok(failed.cause instanceof APIConnectionError && !(failed.cause instanceof APIConnectionTimeoutError));
  assert.equal(failed.data.kind, 'connection');
  assert.equal(failed.data.code, 'ECONNREFUSED');
});

test('an abort before the answer starts, and one in the middle of it, reject with an AbortError; the next turn still goes through', async () => {
  const fake = await startFakeAnthropic({ turns: (body) => (body.messages.length === 1 ? { text: 'one two three four five six seven eight', delayMs: 5000 } : { text: 'Quick.' }) });
  const silent = await silentServer();
  try {
    // Before the answer: a server that never answers.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const early = await createHttpFetch()(silent.url, { method: 'POST', body: '{}', signal: controller.signal }).then(() => assert.fail('expected an abort'), (e: unknown) => e);
    assert.equal((early as Error).name, 'AbortError');

    // In the middle of a streamed answer, through the provider (savepoint's Ctrl-C).
    const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 0 });
    const stop = new AbortController();
    const pieces: string[] = [];
    const answer = provider.complete(conversation(0), { signal: stop.signal, onText: (text) => (pieces.push(text), pieces.length === 2 && stop.abort()) });
    const error = await answer.then(() => assert.fail('expected an abort'), (e: unknown) => e);
    assert.equal((error as Error).name, 'AbortError');
    assert.equal(pieces.length, 2);
    const next = await provider.complete(conversation(1));
    assert.deepEqual(next.content, [{ type: 'text', text: 'Quick.' }]);
  } finally {
    await silent.close();
    await fake.close();
  }
});

test("the SDK's timeout stops a request that gets no answer, as a timeout", async () => {
  const silent = await silentServer();
  try {
    const provider = createAnthropicProvider({ baseURL: silent.url, apiKey: 'test-key', maxRetries: 0, timeout: 100 });
    const error = await provider.complete(conversation(0)).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
    assert.ok(error instanceof ModelError, String(error));
    assert.equal(error.data.kind, 'timeout');
  } finally {
    await silent.close();
  }
});

test('what the SDK never sends through it still works, through the global fetch', async () => {
  const fake = await startFakeAnthropic({ turns });
  try {
    const body = new Blob([JSON.stringify({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })]);
    const response = await createHttpFetch()(`${fake.url}/v1/messages`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { type: string }).type, 'message');
  } finally {
    await fake.close();
  }
});

test('a 307 is followed with its body, and credentials are not sent to another origin; a body reads as a web stream too', async () => {
  const seen: { url: string; auth: string | undefined; body: string }[] = [];
  const target = await httpServer((req, body, res) => {
    seen.push({ url: req.url!, auth: req.headers.authorization, body });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('moved here');
  });
  const origin = await httpServer((req, body, res) => {
    seen.push({ url: req.url!, auth: req.headers.authorization, body });
    res.writeHead(307, { location: `${target.url}/v1/elsewhere` }).end();
  });
  try {
    const response = await createHttpFetch()(`${origin.url}/v1/messages`, { method: 'POST', body: '{"a":1}', headers: { authorization: 'Bearer secret' } });
    assert.equal(response.status, 200);
    assert.equal(response.redirected, true);
    assert.equal(response.url, `${target.url}/v1/elsewhere`);
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    assert.equal(Buffer.concat(chunks).toString(), 'moved here');
    assert.deepEqual(seen, [
      { url: '/v1/messages', auth: 'Bearer secret', body: '{"a":1}' },
      { url: '/v1/elsewhere', auth: undefined, body: '{"a":1}' },
    ]);
  } finally {
    await origin.close();
    await target.close();
  }
});

// An HTTP server on 127.0.0.1 that hands each request, with its whole body, to `answer`.
async function httpServer(answer: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    answer(req, body, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(() => resolve()))),
  };
}

// A server that takes connections and never answers.
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
