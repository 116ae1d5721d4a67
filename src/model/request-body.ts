// The JSON body of a Messages API request, built a turn at a time. An agent's requests grow by a
// message or two per turn, so serializing the whole conversation again for every request costs
// more each turn; this keeps the JSON of every message it has sent and writes only the new ones.
// The text is exactly what JSON.stringify of the whole body gives (the SDK's own encoding): keys
// in the SDK's order (model, max_tokens, messages, system, tools, thinking, stream), the last
// message with its prompt-caching mark.
//
// Messages are told apart by identity: a message object seen before is taken to be unchanged (the
// agent loop never edits one it has sent; a caller that edits an earlier message in place should
// pass a copy). The last message is serialized afresh every time.
import type { Message, ModelRequest } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

/** Builds request bodies for one conversation, reusing the JSON of the messages it has already sent. */
export class RequestBodies {
  // The messages before the last one of the previous request, and the JSON of each.
  private sent: Message[] = [];
  private json: string[] = [];
  // The parts after the messages, for the system prompt, tools and thinking they were made from.
  private tail: { system: string; tools: unknown; thinking: ModelRequest['thinking']; json: string } | undefined;

  /** The body for `request` sent to `model`, streaming. */
  body(request: ModelRequest, model: string): string {
    const { messages } = request;
    const head = `{"model":${JSON.stringify(model)},"max_tokens":${JSON.stringify(request.maxTokens)},"messages":[`;
    const before = Math.max(0, messages.length - 1);
    // How much of the conversation is the one sent before, object for object.
    let same = 0;
    while (same < this.sent.length && same < before && messages[same] === this.sent[same]) same++;
    this.sent.length = same;
    this.json.length = same;
    for (let i = same; i < before; i++) {
      this.sent.push(messages[i]!);
      this.json.push(JSON.stringify(messages[i]));
    }
    const last = messages.length ? `${before ? ',' : ''}${JSON.stringify(withCacheBreakpoint(messages[before]!))}` : '';
    return `${head}${this.json.join(',')}${last}]${this.tailFor(request)}`;
  }

  // `,"system":...,"tools":...,"thinking":...,"stream":true}`, made again only when one of them changed.
  private tailFor({ system, tools, thinking }: ModelRequest): string {
    const kept = this.tail;
    if (kept && kept.system === system && kept.tools === tools && kept.thinking === thinking) return kept.json;
    let json = '';
    if (system) json += `,"system":${JSON.stringify([{ type: 'text', text: system, cache_control: EPHEMERAL }])}`;
    if (tools.length) json += `,"tools":${JSON.stringify(tools)}`;
    if (thinking) json += `,"thinking":${JSON.stringify({ type: 'enabled', budget_tokens: thinking.budgetTokens })}`;
    json += ',"stream":true}';
    this.tail = { system, tools, thinking, json };
    return json;
  }
}

// Prompt caching: an agent's requests grow by a turn at a time, so marking the end of each request
// lets the next one read everything before it from the cache (a tenth of the input price) instead
// of paying for the whole conversation again. Only the API request is marked: the journaled request
// (and so every step's identity) stays as it was. A message ending in thinking is left unmarked.
function withCacheBreakpoint(message: Message): Message | Record<string, unknown> {
  type Block = { type: string } & Record<string, unknown>;
  const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : ([...message.content] as unknown as Block[]);
  const end = blocks.at(-1);
  if (!end || end.type === 'thinking' || end.type === 'redacted_thinking') return message;
  blocks[blocks.length - 1] = { ...end, cache_control: EPHEMERAL };
  return { ...message, content: blocks };
}
