// A ModelRequest as the parameters of the SDK's `client.messages.stream`: keys in the order the
// API's own examples use (model, max_tokens, messages, system, tools, thinking), the system prompt
// and the end of the conversation marked for prompt caching.
import type Anthropic from '@anthropic-ai/sdk';
import type { Message, ModelRequest } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

/** The SDK's stream parameters for `request`, sent to `model`. */
export function requestParams(request: ModelRequest, model: string): Anthropic.MessageStreamParams {
  const messages = request.messages.map((message, i) => (i === request.messages.length - 1 ? withCacheBreakpoint(message) : message));
  return {
    model,
    max_tokens: request.maxTokens,
    messages,
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] } : {}),
    ...(request.tools.length ? { tools: request.tools } : {}),
    ...(request.thinking ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budgetTokens } } : {}),
  } as unknown as Anthropic.MessageStreamParams;
}

// Prompt caching: an agent's requests grow by a turn at a time, so marking the end of each request
// lets the next one read everything before it from the cache (a tenth of the input price) instead
// of paying for the whole conversation again. Only the API request is marked: the journaled request
// (and so every step's identity) stays as it was. A message ending in thinking is left unmarked.
function withCacheBreakpoint(message: Message): Message | Record<string, unknown> {
  type Block = { type: string } & Record<string, unknown>;
  const blocks: Block[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : ([...message.content] as unknown as Block[]);
  const end = blocks.at(-1);
  if (!end || end.type === 'thinking' || end.type === 'redacted_thinking') return message;
  blocks[blocks.length - 1] = { ...end, cache_control: EPHEMERAL };
  return { ...message, content: blocks };
}
