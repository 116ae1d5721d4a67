// The live model: the Anthropic Messages API through the official SDK. Every call streams, so the
// terminal shows text as it arrives, and the SDK keeps its own retries (429, 5xx, 529, lost
// connections) with its backoff. What still fails after them becomes one ModelError with a message
// for a person. Credentials and the address come from options, or else from the environment the
// way the SDK reads it (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), so any
// Anthropic-compatible server works.
import { AnthropicError } from '@anthropic-ai/sdk';
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import type { Stream } from '@anthropic-ai/sdk/core/streaming';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import { abortReason } from './abort.js';
import { toModelError } from './anthropic-errors.js';
import { DEFAULT_MODEL } from './defaults.js';
import { createHttpFetch } from './http-fetch.js';
import { modelNotices, type ModelNotice } from './notices.js';
import { RequestBodies } from './request-body.js';
import { StreamedAnswer } from './streamed-answer.js';
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from './types.js';

export { DEFAULT_MODEL, hasAnthropicCredentials } from './defaults.js';

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
  /** The SDK's retries for one call; default 2. */
  maxRetries?: number;
  /** Milliseconds the SDK waits for one attempt; default the SDK's (10 minutes). */
  timeout?: number;
  /** Told once per provider what the SDK's lists say about the model (it is deprecated, ...), at its first request. */
  onNotice?: (notice: ModelNotice) => void;
}

// The request goes out through the SDK's client, with its retries, backoff, timeout, credentials and
// errors, but not through `client.messages.stream`: that path serializes the whole conversation
// again for every request, walks it twice for helper headers, starts a telemetry span and keeps a
// snapshot per event, and prints the SDK's deprecation warning on every request. The body is built
// a turn at a time (request-body.ts, the same bytes), the events are read as they come
// (streamed-answer.ts), and a model the SDK lists as deprecated is told once, through `onNotice`.
// The client sends through node:http with its own kept-alive connections (http-fetch.ts), not
// Node's fetch, which cost about a millisecond of CPU more a request.
const STREAM_HEADERS = { 'content-type': 'application/json', 'x-stainless-helper-method': 'stream' };

/** A ModelProvider that calls the Anthropic API (or a compatible server) and streams its answers. */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const model = options.model ?? DEFAULT_MODEL;
  const maxRetries = options.maxRetries ?? 2;
  // Only what was given is passed: an absent option lets the SDK read its environment variable.
  const client = new BaseAnthropic({
    maxRetries,
    fetch: createHttpFetch(),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : options.authToken !== undefined ? { authToken: options.authToken } : {}),
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
  });
  const bodies = new RequestBodies();
  const told = new Set<string>();
  const tell = (request: ModelRequest, model: string) => {
    if (!options.onNotice) return;
    for (const notice of modelNotices(model, Boolean(request.thinking))) {
      const key = `${notice.notice} ${notice.model}`;
      if (told.has(key)) continue;
      told.add(key);
      options.onNotice(notice);
    }
  };
  return {
    name: model,
    complete: (request, completeOptions) => streamMessage({ client, defaultModel: model, maxRetries, bodies, tell }, request, completeOptions),
  };
}

interface Caller {
  client: BaseAnthropic;
  defaultModel: string;
  maxRetries: number;
  bodies: RequestBodies;
  tell: (request: ModelRequest, model: string) => void;
}

async function streamMessage({ client, defaultModel, maxRetries, bodies, tell }: Caller, request: ModelRequest, options: CompleteOptions = {}): Promise<ModelResponse> {
  const { onText, onThinking, signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  const model = request.model || defaultModel;
  tell(request, model);
  // An error thrown by onText (the terminal) is savepoint's own, not the model's: kept and rethrown as is.
  let handlerError: { error: unknown } | undefined;
  const relay = (to: ((text: string) => void) | undefined) =>
    to &&
    ((delta: string) => {
      try {
        to(delta);
      } catch (error) {
        handlerError = { error };
        throw error;
      }
    });
  try {
    const body = bodies.body(request, model);
    const events = await client.post<Stream<RawMessageStreamEvent>>('/v1/messages', { body, stream: true, headers: STREAM_HEADERS, ...(signal ? { signal } : {}) });
    const answer = new StreamedAnswer({ onText: relay(onText), onThinking: relay(onThinking) });
    // Leaving the loop early (an error) aborts the response; an abort ends it quietly.
    for await (const event of events) answer.add(event);
    if (signal?.aborted) throw abortReason(signal);
    return answer.response();
  } catch (error) {
    if (handlerError) throw handlerError.error;
    if (signal?.aborted) throw abortReason(signal);
    throw toModelError(asSdkError(error), { model, baseURL: client.baseURL, maxRetries });
  }
}

// What the SDK's MessageStream made of an error that was not its own (a connection that broke in
// the middle of the answer: fetch's "terminated"), so it becomes a ModelError as it did there.
function asSdkError(error: unknown): unknown {
  if (error instanceof AnthropicError) return error;
  if (!(error instanceof Error)) return new AnthropicError(String(error));
  const wrapped = new AnthropicError(error.message);
  wrapped.cause = error;
  return wrapped;
}
