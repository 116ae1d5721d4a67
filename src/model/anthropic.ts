// The live model: the Anthropic Messages API through the official SDK's public API. Every call
// streams through `client.messages.stream`, so the terminal shows text as it arrives, the SDK parses
// tool inputs as they come and keeps its own retries (429, 5xx, 529, lost connections) with its
// backoff. savepoint adds what the SDK leaves to its caller: an `error` event in the middle of an
// answer (overloaded) is asked again the same way a 529 is, a long retry-after is told (a countdown
// on the terminal) and capped (--max-retry-wait), the SDK's deprecation warnings are told once per
// run instead of printed on every request, proxies are honoured (proxy.ts), and two things real
// servers send that the SDK's helper cannot take are repaired on the way in (stream-repair.ts).
// What still fails becomes one ModelError with a message for a person. Credentials and the address
// come from options, or else from the environment the way the SDK reads it (ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), so any Anthropic-compatible server works.
import { createServer, type AddressInfo } from 'node:net';
import Anthropic, { AnthropicError, APIError, type Middleware } from '@anthropic-ai/sdk';
import { ModelError } from '../errors/index.js';
import { abortReason, sleep } from './abort.js';
import { toModelError } from './anthropic-errors.js';
import { DEFAULT_MODEL } from './defaults.js';
import { noteLiveModelLoaded } from './live-loaded.js';
import { withSdkWarnings, type ModelNotice } from './notices.js';
import { modelAddress, proxyClientOptions } from './proxy.js';
import { requestParams } from './request-params.js';
import { streamRepair, type StreamRepairs } from './stream-repair.js';
import type { AssistantBlock, CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from './types.js';

export { DEFAULT_MODEL, hasAnthropicCredentials } from './defaults.js';

// This module is the live model's client: its loading is what the command line asks of live-loaded.ts
// (which compiled code to keep), whichever caller loaded it (a request, or a session's rehearsal).
noteLiveModelLoaded();

/** The longest retry-after (seconds) savepoint waits out unless told otherwise (--max-retry-wait). */
export const DEFAULT_MAX_RETRY_WAIT = 60;

/** Options of createAnthropicProvider; each one left out falls back to the SDK's environment variable or default. */
export interface AnthropicProviderOptions {
  /** Model id; default DEFAULT_MODEL. A request's own `model` wins when it names one. */
  model?: string;
  /** Default: ANTHROPIC_API_KEY. Given both, the key is used (as the SDK does with the variables). */
  apiKey?: string;
  /** Default: ANTHROPIC_AUTH_TOKEN (sent as a bearer token). */
  authToken?: string;
  /** Default: ANTHROPIC_BASE_URL, else https://api.anthropic.com. */
  baseURL?: string;
  /** The SDK's retries for one call (and savepoint's for an error in the middle of an answer); default 2. */
  maxRetries?: number;
  /** Milliseconds the SDK waits for one attempt; default the SDK's (10 minutes). */
  timeout?: number;
  /**
   * The longest wait, in seconds, a 429 or 529's retry-after may ask for; a longer one stops the
   * call with a ModelError (kind `retry-wait`) instead of sleeping through it. Default DEFAULT_MAX_RETRY_WAIT.
   */
  maxRetryWait?: number;
  /**
   * Told what the SDK says about the model (it is deprecated, ...), once per provider, and each
   * wait before the service is asked again (`retry-wait`), as it starts.
   */
  onNotice?: (notice: ModelNotice) => void;
}

// The error types of an `error` event in the middle of an answer that a status would have had the
// SDK retry: overloaded (529) and an internal error (500).
const RETRIED_STREAM_ERRORS = new Set(['overloaded_error', 'api_error']);

// A tool_use block's name or id the API would refuse when it is sent back: stand-ins keep the
// conversation valid while the call is answered with an error instead of being run.
const NAMELESS_TOOL = 'unnamed_tool';

/** A ModelProvider that calls the Anthropic API (or a compatible server) and streams its answers. */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const model = options.model ?? DEFAULT_MODEL;
  const maxRetries = options.maxRetries ?? 2;
  let client: Promise<Anthropic> | undefined;
  // Only what was given is passed: an absent option lets the SDK read its environment variable.
  const clientNow = () =>
    (client ??= proxyClientOptions(modelAddress(options.baseURL)).then(
      (proxy) =>
        new Anthropic({
          maxRetries,
          ...proxy,
          ...(options.apiKey !== undefined
            ? { apiKey: options.apiKey }
            : options.authToken !== undefined
              ? { authToken: options.authToken }
              : {}),
          ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
          ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
        }),
    ));
  const told = new Set<string>();
  const tell = (notice: ModelNotice) => {
    if (!options.onNotice) return;
    if (notice.notice !== 'retry-wait') {
      const key = `${notice.notice} ${notice.model}`;
      if (told.has(key)) return;
      told.add(key);
    }
    options.onNotice(notice);
  };
  const caller: Caller = { clientNow, defaultModel: model, maxRetries, maxRetryWait: options.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT, tell };
  return { name: model, complete: (request, completeOptions) => streamMessage(caller, request, completeOptions) };
}

/**
 * One request through the whole path a live call takes (the SDK's client, its request building
 * and headers, Node's fetch with its HTTP client and parser, the stream's events, savepoint's
 * middleware and reading of the answer), sent to a server on the loopback address that this
 * process opens for it and closes after: nothing leaves the machine, the model's server is not
 * contacted and no credential is sent. The first live request of a process otherwise loads and
 * compiles all of that on its way out (Node's fetch, undici, http2, the HTTP parser's WebAssembly
 * among it): an interactive session rehearses while the person types (prepareLiveModel), so that
 * Enter finds it done.
 */
export async function rehearseRequest(): Promise<void> {
  const server = await rehearsalServer();
  try {
    const client = new Anthropic({
      apiKey: 'rehearsal',
      authToken: null,
      baseURL: server.url,
      maxRetries: 0,
      timeout: REHEARSAL_TIMEOUT_MS,
    });
    const caller: Caller = {
      clientNow: () => Promise.resolve(client),
      defaultModel: DEFAULT_MODEL,
      maxRetries: 0,
      maxRetryWait: DEFAULT_MAX_RETRY_WAIT,
      tell: () => {},
    };
    const request: ModelRequest = {
      model: DEFAULT_MODEL,
      system: 'rehearsal',
      messages: [{ role: 'user', content: 'rehearsal' }],
      tools: [],
      maxTokens: 1,
    };
    await streamOnce(caller, client, request, DEFAULT_MODEL, { onText: () => {} });
  } finally {
    server.close();
  }
}

// A loopback that does not answer (a firewall dropping it) ends the rehearsal, not the session.
const REHEARSAL_TIMEOUT_MS = 10_000;

// The rehearsal's server: on 127.0.0.1, a port the system picks; it reads one request and answers
// it with the events a server streams for one word, then closes the connection.
async function rehearsalServer(): Promise<{ url: string; close: () => void }> {
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_rehearsal',
          type: 'message',
          role: 'assistant',
          model: DEFAULT_MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  const body = Buffer.from(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
  const head = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${body.length}\r\nrequest-id: req_rehearsal\r\nconnection: close\r\n\r\n`;
  const server = createServer((socket) => {
    let got = Buffer.alloc(0);
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(got.subarray(0, end).toString('latin1'))?.[1] ?? 0);
      if (got.length < end + 4 + length) return; // the whole request first, as a server reads it
      socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => void server.close() };
}

interface Caller {
  clientNow: () => Promise<Anthropic>;
  defaultModel: string;
  maxRetries: number;
  maxRetryWait: number;
  tell: (notice: ModelNotice) => void;
}

async function streamMessage(caller: Caller, request: ModelRequest, options: CompleteOptions = {}): Promise<ModelResponse> {
  const { signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  const model = request.model || caller.defaultModel;
  const client = await caller.clientNow();
  for (let attempt = 1; ; attempt++) {
    try {
      return await streamOnce(caller, client, request, model, options);
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (error instanceof HandlerError) throw error.error;
      const own = savepointCause(error);
      if (own) throw own;
      // An error event after the answer had started: asked again as the SDK asks again after a 529.
      if (
        error instanceof APIError &&
        error.status === undefined &&
        RETRIED_STREAM_ERRORS.has(error.type ?? '') &&
        attempt <= caller.maxRetries
      ) {
        const ms = backoffMs(attempt);
        caller.tell({
          notice: 'retry-wait',
          model,
          seconds: Math.round(ms / 100) / 10,
          reason: `the answer broke off (${error.type})`,
          attempt,
          attempts: caller.maxRetries,
        });
        await sleep(ms, signal);
        continue;
      }
      throw toModelError(error, { model, baseURL: client.baseURL, maxRetries: caller.maxRetries, streamRetries: attempt - 1 });
    }
  }
}

async function streamOnce(
  caller: Caller,
  client: Anthropic,
  request: ModelRequest,
  model: string,
  options: CompleteOptions,
): Promise<ModelResponse> {
  const { onText, onThinking, signal } = options;
  const repairs: StreamRepairs = { invalidInputs: new Map() };
  const middleware = [retryWaitGuard(caller, model, client.baseURL), streamRepair(repairs)];
  const stream = withSdkWarnings(
    () => client.messages.stream(requestParams(request, model), { middleware, ...(signal ? { signal } : {}) }),
    caller.tell,
  );
  // An error thrown by onText (the terminal) is savepoint's own, not the model's: kept and rethrown as is.
  let handlerError: HandlerError | undefined;
  const relay = (to: (text: string) => void) => (delta: string) => {
    try {
      to(delta);
    } catch (error) {
      throw (handlerError = new HandlerError(error));
    }
  };
  if (onText) stream.on('text', relay(onText));
  if (onThinking) stream.on('thinking', relay(onThinking));
  try {
    const message = await stream.finalMessage();
    if (signal?.aborted) throw abortReason(signal);
    return toResponse(message, repairs);
  } catch (error) {
    throw handlerError ?? error;
  }
}

// Looks at each answer the SDK is about to retry: a retry-after longer than the cap stops the call
// (the SDK would sleep through it, an hour if the server says so, with nothing on the screen); a
// shorter one of a second or more is told, so the terminal can count it down.
function retryWaitGuard(caller: Caller, model: string, baseURL: string): Middleware {
  let attempts = 0;
  return async (request, next) => {
    const response = await next(request);
    attempts++;
    if (response.ok || attempts > caller.maxRetries || !sdkRetries(response)) return response;
    const seconds = retryAfterSeconds(response.headers);
    if (seconds === undefined) return response;
    const type = response.status === 429 ? 'rate_limit_error' : response.status === 529 ? 'overloaded_error' : undefined;
    if (seconds > caller.maxRetryWait) {
      await response.body?.cancel().catch(() => undefined);
      throw new ModelError({
        model,
        baseURL,
        kind: 'retry-wait',
        status: response.status,
        ...(type ? { type } : {}),
        retries: attempts - 1,
        waitSeconds: Math.ceil(seconds),
        maxRetryWait: caller.maxRetryWait,
        ...(response.headers.get('request-id') ? { requestId: response.headers.get('request-id')! } : {}),
      });
    }
    if (seconds >= 1)
      caller.tell({
        notice: 'retry-wait',
        model,
        seconds: Math.ceil(seconds),
        reason: `the API answered ${response.status}${type ? ` ${type}` : ''}`,
        attempt: attempts,
        attempts: caller.maxRetries,
      });
    return response;
  };
}

// The SDK's own rule for which answers it retries (its client's shouldRetry).
function sdkRetries(response: Response): boolean {
  const header = response.headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return response.status === 408 || response.status === 409 || response.status === 429 || response.status >= 500;
}

// The wait the server asked for, in seconds, read as the SDK reads it (retry-after-ms first, then
// retry-after as seconds or as a date); undefined when it asked for none the SDK would use.
function retryAfterSeconds(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms > 0) return ms / 1000;
  const after = headers.get('retry-after');
  if (!after) return undefined;
  const seconds = Number.parseFloat(after);
  const wait = Number.isNaN(seconds) ? (Date.parse(after) - Date.now()) / 1000 : seconds;
  return wait > 0 && wait * 1000 <= 2 ** 31 - 1 ? wait : undefined;
}

// The SDK's backoff before its n-th retry: half a second doubled each time, at most 8 s, less up to a quarter of jitter.
function backoffMs(attempt: number): number {
  return Math.min(0.5 * 2 ** (attempt - 1), 8) * (1 - Math.random() * 0.25) * 1000;
}

/** An error thrown by one of the caller's own handlers (onText, onThinking), carried out of the SDK unchanged. */
class HandlerError extends Error {
  constructor(readonly error: unknown) {
    super('a stream handler failed');
  }
}

// A ModelError of savepoint's own (the retry-wait cap) that the SDK wrapped on its way out.
function savepointCause(error: unknown): ModelError | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    if (current instanceof ModelError) return current;
    if (current instanceof HandlerError) return undefined;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

// The SDK's message in savepoint's shapes: the block kinds it uses (text, tool_use, and thinking and
// redacted_thinking with their signatures, kept exactly so they can be sent back; server tools are
// dropped). A tool call the agent must not run (no name, an id used twice, input that was not JSON)
// is kept, made valid to send back, and listed in `invalidCalls` with what was wrong.
function toResponse(message: Anthropic.Message, repairs: StreamRepairs): ModelResponse {
  if (!message || typeof message !== 'object' || !Array.isArray(message.content))
    throw new AnthropicError('stream ended without producing a Message with role=assistant');
  const content: AssistantBlock[] = [];
  const invalidCalls: Record<string, string> = {};
  const ids = new Set<string>();
  for (const [index, raw] of message.content.entries()) {
    const block = raw as unknown as Record<string, unknown>;
    if (block.type === 'thinking')
      content.push({ type: 'thinking', thinking: String(block.thinking ?? ''), signature: String(block.signature ?? '') });
    if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: String(block.data ?? '') });
    if (block.type === 'text') content.push({ type: 'text', text: String(block.text ?? '') });
    if (block.type !== 'tool_use') continue;
    const named = typeof block.name === 'string' && block.name !== '';
    const name = named ? (block.name as string) : NAMELESS_TOOL;
    let id = typeof block.id === 'string' && block.id ? block.id : `toolu_savepoint_${index}`;
    const repeated = ids.has(id);
    if (repeated) id = `${id}_${index}`;
    ids.add(id);
    const input =
      block.input && typeof block.input === 'object' && !Array.isArray(block.input) ? (block.input as Record<string, unknown>) : {};
    content.push({ type: 'tool_use', id, name, input });
    const invalidJson = repairs.invalidInputs.get(index);
    if (!named) invalidCalls[id] = 'This tool call had no name, so it was not run. Call one of the tools by its name.';
    else if (repeated)
      invalidCalls[id] =
        `This ${name} call used the id of another call in the same answer, so it was not run (savepoint gave it a new id). Send it again if it is still needed.`;
    else if (invalidJson !== undefined) {
      const shown = invalidJson.length > 200 ? `${invalidJson.slice(0, 200)}…` : invalidJson;
      invalidCalls[id] =
        `The input of this ${name} call was not valid JSON, so it was not run: ${JSON.stringify(shown)}. Send the call again with its input as one JSON object.`;
    }
  }
  const usage = (message.usage ?? {}) as unknown as Record<string, number | null | undefined>;
  return {
    model: message.model,
    content,
    stopReason: message.stop_reason ?? 'end_turn',
    usage: {
      inputTokens: usage.input_tokens ?? 0,
      outputTokens: usage.output_tokens ?? 0,
      cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
      cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
    },
    ...(Object.keys(invalidCalls).length ? { invalidCalls } : {}),
  };
}
