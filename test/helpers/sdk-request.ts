// The Messages API parameters savepoint passed to the SDK's `client.messages.stream` before it
// built request bodies itself (model/request-body.ts): the reference its bodies must equal.
import type { ModelRequest } from '../../src/model/types.js';

// The request as `messages.stream` params: the system prompt and the last block marked for caching.
export function sdkParams(request: ModelRequest, model: string): Record<string, unknown> & { model: string; max_tokens: number; messages: unknown[] } {
  const messages = request.messages.map((message, i) => {
    if (i < request.messages.length - 1) return message;
    const blocks = (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content]) as Array<Record<string, unknown>>;
    const end = blocks.at(-1);
    if (!end || end.type === 'thinking' || end.type === 'redacted_thinking') return message;
    blocks[blocks.length - 1] = { ...end, cache_control: { type: 'ephemeral' } };
    return { ...message, content: blocks };
  });
  return {
    model,
    max_tokens: request.maxTokens,
    messages,
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }] } : {}),
    ...(request.tools.length ? { tools: request.tools } : {}),
    ...(request.thinking ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budgetTokens } } : {}),
  };
}
