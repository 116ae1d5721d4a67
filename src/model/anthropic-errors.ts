// From what the SDK throws, after its retries, to a ModelError that says what happened and what to
// do. Errors that are not the SDK's (a bug in savepoint) pass through unchanged.
import { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { ModelError, type ModelErrorData } from '../errors/index.js';

/** The facts of the failed call that the message is built from. */
export interface CallContext {
  model: string;
  baseURL: string;
  maxRetries: number;
  /** How many times savepoint asked again after an error event in the middle of an answer. */
  streamRetries?: number;
}

/** The ModelError for an SDK error, or `error` itself when it did not come from the SDK. */
export function toModelError(error: unknown, { model, baseURL, maxRetries, streamRetries = 0 }: CallContext): unknown {
  if (!(error instanceof AnthropicError)) return error;
  const base = { model, baseURL };
  if (error instanceof APIConnectionTimeoutError)
    return new ModelError({ ...base, kind: 'timeout', retries: maxRetries }, { cause: error });
  if (error instanceof APIConnectionError) {
    const code = connectionProblem(error.cause);
    return new ModelError({ ...base, kind: 'connection', retries: maxRetries, ...(code ? { code } : {}) }, { cause: error });
  }
  if (error instanceof APIError) {
    const details: Partial<ModelErrorData> = {
      ...(error.type ? { type: error.type } : {}),
      ...(error.apiMessage ? { apiMessage: error.apiMessage } : {}),
      ...(error.requestID ? { requestId: error.requestID } : {}),
    };
    // No status: the API sent an `error` event after the answer had started.
    if (error.status === undefined)
      return new ModelError({ ...base, ...details, kind: 'stream', retries: streamRetries }, { cause: error });
    const retries = wasRetried(error.status, error.headers) ? maxRetries : 0;
    return new ModelError({ ...base, ...details, kind: 'status', status: error.status, retries }, { cause: error });
  }
  // The SDK found no key, token or credentials profile (it says so only in words).
  if (/could not resolve authentication method/i.test(error.message))
    return new ModelError({ ...base, kind: 'credentials', retries: 0 }, { cause: error });
  return new ModelError({ ...base, kind: 'other', apiMessage: error.message, retries: 0 }, { cause: error });
}

// The SDK's own rule for which answers it retries (client.ts, shouldRetry).
function wasRetried(status: number, headers: Headers | undefined): boolean {
  const header = headers?.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

// What the network layer said: the first system code (`ECONNREFUSED`, `ENOTFOUND`, ...) down the
// chain of causes, else the innermost cause's words (fetch's own "fetch failed" says nothing).
function connectionProblem(cause: unknown): string | undefined {
  let words: string | undefined;
  for (let current = cause, depth = 0; current && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (typeof message === 'string' && message && message !== 'fetch failed') words = message;
    current = (current as { cause?: unknown }).cause;
  }
  return words;
}
