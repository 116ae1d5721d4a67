// A small stand-in for the Anthropic Messages API on 127.0.0.1, so tests drive the real SDK path
// (streaming, retries, error mapping) with no network. It answers `POST /v1/messages` from scripted
// turns (the format of src/model/scripted.ts), as JSON or, when the body says `"stream": true`, as
// the real server-sent event sequence: message_start, content_block_start / content_block_delta
// (text_delta, input_json_delta) / content_block_stop for each block, message_delta with the stop
// reason and usage, message_stop. It records every request body, and fails on demand with the API's
// error bodies. Like a real model it stops an answer at max_tokens (stop_reason "max_tokens", a tool
// call's input cut mid-JSON), refuses a request above its context window with 400 "prompt is too
// long: N tokens > M maximum", answers savepoint's compaction requests with a summary, and, with
// thinking on, sends signed thinking (and redacted_thinking) blocks and refuses them sent back changed.
//
//   const fake = await startFakeAnthropic({ turns: [{ text: 'Hello there.' }] });
//   const provider = createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
//   fake.failNext(529);            // the next request gets 529 overloaded_error
//   fake.quirkNext({ usageInDelta: false });  // the next streamed answer misbehaves, as some servers do
//   ...; fake.requests.length;      // every body received, failed ones included
//   await fake.close();
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateScript, type ScriptTurn } from '../../src/model/script-file.js';
import { isCompactionRequest } from '../../src/model/compaction.js';
import { ranOutTurn, summaryTurn, textChunks, thinkingSignature, turnIndex, turnResponse } from '../../src/model/script-turn.js';
import type { ModelResponse } from '../../src/model/types.js';

// The parts of a Messages API request body the fake looks at; the rest is recorded as sent.
export interface MessagesBody {
  model: string;
  max_tokens: number;
  messages: { role: string; content: unknown }[];
  system?: unknown;
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

// Options of startFakeAnthropic.
export interface FakeAnthropicOptions {
  // The answers: a list picked by the number of assistant messages in the request (like the
  // scripted provider), or a function of the request body.
  turns?: ScriptTurn[] | ((request: MessagesBody) => ScriptTurn);
  // The model id answers report; default the one the request named.
  model?: string;
  // When set, requests must carry this key (x-api-key, or a bearer token) or get a 401.
  apiKey?: string;
  // The model's context window in tokens (a request's tokens are estimated as its JSON length / 4,
  // as its reported usage is): a request above it is answered 400 "prompt is too long: N tokens >
  // M maximum", as the real API answers. Default: no limit.
  contextWindow?: number;
  // The answer to a compaction request (one that ends with savepoint's summarization instruction);
  // default a summary naming the turns it stands for. Compaction requests use no turn.
  summary?: string;
  // The answers to the first compaction requests, in order (a tool call, nothing), before `summary`
  // answers the rest: a model that does not summarize when asked.
  summaries?: ScriptTurn[];
  // Sent as `retry-after-ms` with every injected error so the SDK retries at once instead of after
  // its 0.5-8 s backoff. The SDK ignores 0 (it then uses its backoff), hence 1. `null` sends none.
  retryAfterMs?: number | null;
  // Called with each request's turn index before it is answered; a promise it returns holds the
  // answer back until it settles (a test releases it), so a client can be paused in the middle of
  // a call without racing a timer.
  gate?: (index: number, request: MessagesBody) => Promise<void> | undefined;
}

// How an injected failure looks (see failNext).
export interface FailOptions {
  // The API's error type and message; defaults follow the status (529 → overloaded_error, ...).
  type?: string;
  message?: string;
  // Fail after the stream started: status 200, message_start, then an `error` event (only for
  // streaming requests), as the real API does when it overloads in the middle of an answer.
  midStream?: boolean;
  // Sent as `retry-after` (seconds) instead of the server's usual retry-after-ms.
  retryAfter?: number;
}

// How a streamed answer may misbehave, as proxies, compatible servers and models have been seen to
// (see quirkNext). Each one changes only the event stream, never the answer's JSON form.
export interface StreamQuirks {
  // false: message_delta carries no `usage` at all.
  usageInDelta?: boolean;
  // The raw input JSON of the tool call at this position among the answer's calls (0 the first), sent
  // in place of its real input: `{"path": nope}` is a call whose input is not valid JSON.
  toolInputJson?: Record<number, string>;
  // true: the answer's tool_use blocks start without a `name`.
  noToolName?: boolean;
  // true: every tool_use block of the answer carries the id of the first.
  sameToolId?: boolean;
}

// A running fake server.
export interface FakeAnthropic {
  // Base URL for the SDK's `baseURL`.
  url: string;
  // Every request body received, in order, including those answered with an error.
  requests: MessagesBody[];
  // The headers of each request, parallel to `requests`.
  headers: IncomingHttpHeaders[];
  // The next `times` requests (default 1) fail with `status` and the API's JSON error body.
  failNext(status: number, times?: number, options?: FailOptions): void;
  // The next streamed answer (not a failed request) misbehaves as `quirks` say.
  quirkNext(quirks: StreamQuirks): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const ERROR_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  billing_error: 'Your credit balance is too low to access the Anthropic API',
  permission_error: 'Your API key does not have permission to use the specified resource',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes',
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  authentication_error: 'invalid x-api-key',
};

// Starts the fake on a free port of 127.0.0.1.
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const turns = options.turns ?? [{ text: 'Hello from the fake Anthropic API.' }];
  if (Array.isArray(turns)) validateScript({ turns }, 'given to startFakeAnthropic');
  const retryAfterMs = options.retryAfterMs === undefined ? 1 : options.retryAfterMs;
  const failures: { status: number; options: FailOptions }[] = [];
  const quirks: StreamQuirks[] = [];
  const summaries = [...(options.summaries ?? [])];
  const requests: MessagesBody[] = [];
  const headers: IncomingHttpHeaders[] = [];
  let served = 0;

  // A client that hangs up mid-request (an aborted call) must not become an unhandled rejection.
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const id = ++served;
    res.setHeader('request-id', `req_fake_${id}`);
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') {
      return sendError(res, 404, 'not_found_error', `Not found: ${req.method} ${req.url}`);
    }
    let body: MessagesBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesBody;
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'The request body is not valid JSON');
    }
    requests.push(body);
    headers.push(req.headers);

    if (options.apiKey !== undefined && req.headers['x-api-key'] !== options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    }
    const problem = invalidBody(body);
    if (problem) return sendError(res, 400, 'invalid_request_error', problem);

    const failure = failures.shift();
    if (failure && !(failure.options.midStream && body.stream)) {
      const type = failure.options.type ?? ERROR_TYPES[failure.status] ?? 'api_error';
      return sendError(res, failure.status, type, failure.options.message ?? ERROR_MESSAGES[type] ?? `Error ${failure.status}`, failure.options.retryAfter === undefined ? retryAfterMs : null, failure.options.retryAfter);
    }

    const tokens = Math.max(1, Math.ceil(JSON.stringify(body).length / 4));
    if (options.contextWindow !== undefined && tokens > options.contextWindow) {
      return sendError(res, 400, 'invalid_request_error', `prompt is too long: ${tokens} tokens > ${options.contextWindow} maximum`);
    }
    const thinkingProblem = checkThinking(body);
    if (thinkingProblem) return sendError(res, 400, 'invalid_request_error', thinkingProblem);
    const index = turnIndex(body.messages);
    const scripted = isCompactionRequest(body.messages)
      ? (summaries.shift() ?? summaryTurn(options.summary, body.messages))
      : Array.isArray(turns)
        ? (turns[index] ?? ranOutTurn('given to startFakeAnthropic', turns.length))
        : turns(body);
    // With thinking on, every answer starts with a signed thinking block (the turn's, or a default);
    // with it off, none does.
    const thinking = (body.thinking as { type?: string } | undefined)?.type === 'enabled';
    const { thinking: thought, redactedThinking, ...plain } = scripted;
    const turn: ScriptTurn = thinking ? { ...plain, thinking: thought ?? `Thinking about turn ${index}.`, ...(redactedThinking !== undefined ? { redactedThinking } : {}) } : plain;
    const full = turnResponse(turn, index, options.model ?? body.model, JSON.stringify(body).length);
    // As a real model does: an answer longer than max_tokens stops there (about 4 characters a token).
    const { response, partialInputs } = turn.stopReason ? { response: full, partialInputs: new Map<number, string>() } : await cutAtMaxTokens(full, body.max_tokens);
    await options.gate?.(index, body);
    if (res.destroyed) return;
    const cache = { creation: turn.usage?.cacheCreationInputTokens !== undefined, read: turn.usage?.cacheReadInputTokens !== undefined };
    const message = toApiMessage(response, `msg_fake_${id}`, cache);
    if (!body.stream) {
      await wait(turn.delayMs ?? 0, res);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message));
      return;
    }
    await streamMessage(res, message, turn, failure?.options, partialInputs, failure ? {} : (quirks.shift() ?? {}));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    headers,
    failNext(status, times = 1, failOptions = {}) {
      for (let i = 0; i < times; i++) failures.push({ status, options: failOptions });
    },
    quirkNext(next) {
      quirks.push(next);
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

type ApiBlock = ModelResponse['content'][number];

interface ApiMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ApiBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: Record<string, number>;
}

// The API's message shape. Cache counters are sent only when the turn gives them, so tests also
// cover a server that leaves them out (as compatible servers do).
function toApiMessage(response: ModelResponse, id: string, cache: { creation: boolean; read: boolean }): ApiMessage {
  const { usage } = response;
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: response.model,
    content: response.content,
    stop_reason: response.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      ...(cache.creation ? { cache_creation_input_tokens: usage.cacheCreationInputTokens } : {}),
      ...(cache.read ? { cache_read_input_tokens: usage.cacheReadInputTokens } : {}),
    },
  };
}

// The answer as a model that stops at `maxTokens` gives it: its blocks up to the limit (about four
// characters a token: text, then each tool call's input JSON), the block at the limit cut short,
// stop_reason "max_tokens" and output_tokens at the limit. A cut tool call keeps the JSON sent so
// far (its partial input, which the SDK parses as it streams: `"timeout_ms": 60000` cut after the
// 6 arrives as 6); the JSON answer carries that partial JSON parsed the same way (partialInput).
async function cutAtMaxTokens(response: ModelResponse, maxTokens: number): Promise<{ response: ModelResponse; partialInputs: Map<number, string> }> {
  const partialInputs = new Map<number, string>();
  let room = maxTokens * 4;
  const content: ModelResponse['content'] = [];
  for (const block of response.content) {
    const text = block.type === 'text' ? block.text : block.type === 'tool_use' ? JSON.stringify(block.input) : '';
    if (text.length <= room) {
      content.push(block);
      room -= text.length;
      continue;
    }
    if (room > 0 && block.type === 'text') content.push({ ...block, text: block.text.slice(0, room) });
    if (room > 0 && block.type === 'tool_use') {
      const partial = text.slice(0, room);
      partialInputs.set(content.length, partial);
      content.push({ ...block, input: await partialInput(block.id, block.name, partial) });
    }
    return { response: { ...response, content, stopReason: 'max_tokens', usage: { ...response.usage, outputTokens: maxTokens } }, partialInputs };
  }
  return { response, partialInputs };
}

// What the SDK's own stream helper makes of a tool call whose input JSON stops at `partial`: its
// public client is handed a fetch that answers here with that one block streamed, so the input is
// parsed by the SDK's own partial-JSON reading (no private path of the SDK; nothing leaves the process).
async function partialInput(id: string, name: string, partial: string): Promise<Record<string, unknown>> {
  const events = [
    { type: 'message_start', message: { id: 'msg_cut', type: 'message', role: 'assistant', model: 'cut', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name, input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: partial } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ];
  const body = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const fetch = async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  // Loaded here, not at the top: loading the SDK module by module costs a test process about 0.5 s
  // of CPU, and most of the 160-odd test files that start a fake never cut a tool call's input.
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ apiKey: 'local', baseURL: 'http://cut.invalid', maxRetries: 0, fetch });
  const message = await client.messages.stream({ model: 'cut', max_tokens: 1, messages: [{ role: 'user', content: 'cut' }] }).finalMessage();
  const block = message.content[0];
  return block?.type === 'tool_use' && block.input !== null && typeof block.input === 'object' ? (block.input as Record<string, unknown>) : {};
}

async function streamMessage(res: ServerResponse, message: ApiMessage, turn: ScriptTurn, failure: FailOptions | undefined, partialInputs = new Map<number, string>(), quirks: StreamQuirks = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: object) => {
    if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const { input_tokens, output_tokens, ...cache } = message.usage;
  send('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens, output_tokens: 1, ...cache } } });
  if (failure) {
    const type = failure.type ?? 'overloaded_error';
    send('error', { type: 'error', error: { type, message: failure.message ?? ERROR_MESSAGES[type] ?? 'Error' } });
    return void res.end();
  }
  send('ping', { type: 'ping' });
  // The turn's delay is spread over the text deltas, as a live model's answer would be.
  const textPieces = message.content.reduce((n, block) => n + (block.type === 'text' ? textChunks(block.text).length : 0), 0);
  const pause = (turn.delayMs ?? 0) / Math.max(1, textPieces);
  let calls = 0;
  const firstId = message.content.find((block) => block.type === 'tool_use')?.id;
  for (const [index, block] of message.content.entries()) {
    if (block.type === 'thinking') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of textChunks(block.thinking)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'redacted_thinking') {
      send('content_block_start', { type: 'content_block_start', index, content_block: block });
    } else if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const text of textChunks(block.text)) {
        await wait(pause, res);
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
    } else {
      const call = calls++;
      const { name: _name, ...nameless } = block as Extract<ApiBlock, { type: 'tool_use' }>;
      const started = { ...(quirks.noToolName ? nameless : block), ...(quirks.sameToolId && firstId ? { id: firstId } : {}), input: {} };
      send('content_block_start', { type: 'content_block_start', index, content_block: started });
      // The input arrives as partial JSON in pieces that are not valid JSON on their own.
      const json = quirks.toolInputJson?.[call] ?? partialInputs.get(index) ?? JSON.stringify((block as { input: unknown }).input);
      const half = Math.ceil(json.length / 2);
      for (const partial_json of [json.slice(0, half), json.slice(half)].filter(Boolean)) {
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  }
  if (textPieces === 0) await wait(turn.delayMs ?? 0, res);
  send('message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, ...(quirks.usageInDelta === false ? {} : { usage: { output_tokens } }) });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function sendError(res: ServerResponse, status: number, type: string, message: string, retryAfterMs: number | null = null, retryAfter?: number): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (retryAfterMs !== null) headers['retry-after-ms'] = String(retryAfterMs);
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

// What the real API would refuse with a 400, so a malformed request fails here as it would there.
function invalidBody(body: MessagesBody): string | undefined {
  if (typeof body !== 'object' || body === null) return 'The request body must be a JSON object';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  if (body.messages[0]?.role !== 'user') return 'messages: first message must use the "user" role';
  return undefined;
}

// What the real API refuses when thinking is on: a budget not below max_tokens, a thinking block
// sent back changed (its signature no longer matches), or a final assistant turn with a tool call
// that does not start with its thinking block.
function checkThinking(body: MessagesBody): string | undefined {
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (thinking?.type !== 'enabled') return undefined;
  if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens! < 1024) return 'thinking.budget_tokens: Input should be greater than or equal to 1024';
  if (thinking.budget_tokens! >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  for (const [i, message] of body.messages.entries()) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [j, block] of (message.content as Array<{ type: string; thinking?: string; signature?: string }>).entries()) {
      if (block.type === 'thinking' && block.signature !== thinkingSignature(block.thinking ?? '')) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const last = body.messages.findLast((m) => m.role === 'assistant');
  const blocks = Array.isArray(last?.content) ? (last.content as Array<{ type: string }>) : [];
  if (blocks.some((b) => b.type === 'tool_use') && !['thinking', 'redacted_thinking'].includes(blocks[0]?.type ?? '')) {
    return `messages: Expected \`thinking\` or \`redacted_thinking\`, but found \`${blocks[0]?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
  }
  return undefined;
}

// Waits, but no longer than the client stays connected.
function wait(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0 || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done() {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
  });
}
