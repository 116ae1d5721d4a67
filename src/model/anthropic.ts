// The live model: the Anthropic Messages API through the official SDK. Every call streams, so the
// terminal shows text as it arrives, and the SDK keeps its own retries (429, 5xx, 529, lost
// connections) with its backoff. What still fails after them becomes one ModelError with a message
// for a person. Credentials and the address come from options, or else from the environment the
// way the SDK reads it (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), so any
// Anthropic-compatible server works.
import type Anthropic from '@anthropic-ai/sdk';
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import { abortReason } from './abort.js';
import { toModelError } from './anthropic-errors.js';
import type { AssistantBlock, CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from './types.js';

import { DEFAULT_MODEL } from './defaults.js';

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
}

// The SDK's client with only the Messages API. `new Anthropic()` also builds every other resource
// (models, files, batches, beta...), so a bundle of the CLI (scripts/bundle.js) would have to keep
// all of the SDK's code: with this one it keeps a quarter of it, and start-up loads that much less.
class MessagesClient extends BaseAnthropic {
  messages = new Messages(this);
}

/** A ModelProvider that calls the Anthropic API (or a compatible server) and streams its answers. */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const model = options.model ?? DEFAULT_MODEL;
  const maxRetries = options.maxRetries ?? 2;
  // Only what was given is passed: an absent option lets the SDK read its environment variable.
  const client = new MessagesClient({
    maxRetries,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : options.authToken !== undefined ? { authToken: options.authToken } : {}),
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
  });
  return {
    name: model,
    complete: (request, completeOptions) => streamMessage(client, model, maxRetries, request, completeOptions),
  };
}

async function streamMessage(client: MessagesClient, defaultModel: string, maxRetries: number, request: ModelRequest, options: CompleteOptions = {}): Promise<ModelResponse> {
  const { onText, onThinking, signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  const model = request.model || defaultModel;
  // An error thrown by onText (the terminal) is savepoint's own, not the model's: kept and rethrown as is.
  let textError: { error: unknown } | undefined;
  try {
    const stream = client.messages.stream(toParams(request, model), signal ? { signal } : {});
    const relay = (to: (text: string) => void) => (delta: string) => {
      if (textError) return;
      try {
        to(delta);
      } catch (error) {
        textError = { error };
        stream.abort();
      }
    };
    if (onText) stream.on('text', relay(onText));
    if (onThinking) stream.on('thinking', relay(onThinking));
    return toResponse(await stream.finalMessage());
  } catch (error) {
    if (textError) throw textError.error;
    if (signal?.aborted) throw abortReason(signal);
    throw toModelError(error, { model, baseURL: client.baseURL, maxRetries });
  }
}

function toParams(request: ModelRequest, model: string): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: request.maxTokens,
    messages: withCacheBreakpoint(request.messages),
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }] } : {}),
    // savepoint's tool schemas are plain JSON Schema objects; the SDK types them more narrowly.
    ...(request.tools.length ? { tools: request.tools as Anthropic.Tool[] } : {}),
    ...(request.thinking ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budgetTokens } } : {}),
  };
}

// Prompt caching: an agent's requests grow by a turn at a time, so marking the end of each request
// lets the next one read everything before it from the cache (a tenth of the input price) instead
// of paying for the whole conversation again. Only the API request is marked: the journaled request
// (and so every step's identity) stays as it was.
function withCacheBreakpoint(messages: ModelRequest['messages']): Anthropic.MessageParam[] {
  const params = messages as Anthropic.MessageParam[];
  const last = params.at(-1);
  if (!last) return params;
  const blocks: Anthropic.ContentBlockParam[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  const end = blocks.at(-1);
  if (!end || end.type === 'thinking' || end.type === 'redacted_thinking') return params;
  blocks[blocks.length - 1] = { ...end, cache_control: { type: 'ephemeral' } } as Anthropic.ContentBlockParam;
  return [...params.slice(0, -1), { ...last, content: blocks } as Anthropic.MessageParam];
}

// The block kinds savepoint uses: text, tool_use, and thinking and redacted_thinking with their
// signatures, kept exactly so they can be sent back (server tools are dropped).
function toResponse(message: Anthropic.Message): ModelResponse {
  const content: AssistantBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    if (block.type === 'tool_use') {
      const input = typeof block.input === 'object' && block.input !== null ? (block.input as Record<string, unknown>) : {};
      content.push({ type: 'tool_use', id: block.id, name: block.name, input });
    }
  }
  const usage = message.usage;
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
  };
}
