// One streamed answer of the Messages API, put together from its server-sent events as the SDK's
// MessageStream does it (savepoint reads the event stream itself: the MessageStream's per-event
// snapshots, listeners and telemetry spans are work it never used). The same rules: events before
// message_start are ignored, text and thinking grow by their deltas, a signature delta replaces the
// signature, a tool call's input is its JSON deltas parsed (partially, when the answer was cut off
// mid-JSON) with the SDK's own parser, and an answer without message_stop is an error in the SDK's
// words. Text and thinking are handed on as they arrive.
import { AnthropicError } from '@anthropic-ai/sdk';
import { partialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import type { AssistantBlock, ModelResponse } from './types.js';

// A content block as it grows: the block the server started, with its text, thinking, signature
// and tool input JSON so far.
interface Growing {
  type: string;
  block: Record<string, unknown>;
  text: string;
  thinking: string;
  signature: string;
  json: string | undefined;
}

/** The callbacks of a streamed answer: its text and its thinking, piece by piece. */
export interface StreamedAnswerHandlers {
  onText?: (text: string) => void;
  onThinking?: (text: string) => void;
}

/** Takes a Messages API stream's events one at a time and gives the whole answer at the end. */
export class StreamedAnswer {
  private readonly handlers: StreamedAnswerHandlers;
  private started: { model: string; usage: Record<string, number | null | undefined> } | undefined;
  private stopReason: string | null = null;
  private readonly blocks: Growing[] = [];
  private stopped = false;

  constructor(handlers: StreamedAnswerHandlers = {}) {
    this.handlers = handlers;
  }

  /** One event of the stream. */
  add(event: RawMessageStreamEvent): void {
    if (event.type === 'message_start') {
      if (this.started) throw new AnthropicError(`Unexpected event order, got ${event.type} before receiving "message_stop"`);
      this.started = { model: event.message.model, usage: { ...event.message.usage } as Record<string, number | null | undefined> };
      for (const block of event.message.content) this.start(block as unknown as Record<string, unknown>);
      return;
    }
    if (!this.started || this.stopped) return;
    switch (event.type) {
      case 'message_delta': {
        this.stopReason = event.delta.stop_reason;
        const usage = this.started.usage;
        usage.output_tokens = event.usage.output_tokens;
        if (event.usage.input_tokens != null) usage.input_tokens = event.usage.input_tokens;
        if (event.usage.cache_creation_input_tokens != null) usage.cache_creation_input_tokens = event.usage.cache_creation_input_tokens;
        if (event.usage.cache_read_input_tokens != null) usage.cache_read_input_tokens = event.usage.cache_read_input_tokens;
        return;
      }
      case 'content_block_start':
        return this.start(event.content_block as unknown as Record<string, unknown>);
      case 'content_block_delta': {
        const block = this.blocks.at(event.index);
        if (!block) return;
        const delta = event.delta;
        if (delta.type === 'text_delta' && block.type === 'text') {
          block.text += delta.text;
          this.handlers.onText?.(delta.text);
        } else if (delta.type === 'thinking_delta' && block.type === 'thinking') {
          block.thinking += delta.thinking;
          this.handlers.onThinking?.(delta.thinking);
        } else if (delta.type === 'signature_delta' && block.type === 'thinking') {
          block.signature = delta.signature;
        } else if (delta.type === 'input_json_delta' && (block.type === 'tool_use' || block.type === 'server_tool_use')) {
          block.json = (block.json ?? '') + delta.partial_json;
        }
        return;
      }
      case 'message_stop':
        this.stopped = true;
        return;
      default:
        return;
    }
  }

  /** The whole answer, once the stream has ended. */
  response(): ModelResponse {
    if (!this.started) throw new AnthropicError('request ended without sending any chunks');
    if (!this.stopped) throw new AnthropicError('stream ended without producing a Message with role=assistant');
    const content: AssistantBlock[] = [];
    // The block kinds savepoint uses: text, tool_use, and thinking and redacted_thinking with their
    // signatures, kept exactly so they can be sent back (server tools are dropped).
    for (const growing of this.blocks) {
      const { type, block } = growing;
      if (type === 'thinking') content.push({ type: 'thinking', thinking: growing.thinking, signature: growing.signature });
      if (type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data as string });
      if (type === 'text') content.push({ type: 'text', text: growing.text });
      if (type === 'tool_use') {
        const parsed: unknown = growing.json === undefined ? block.input : growing.json ? partialParse(growing.json) : {};
        const input = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
        content.push({ type: 'tool_use', id: block.id as string, name: block.name as string, input });
      }
    }
    const usage = this.started.usage;
    return {
      model: this.started.model,
      content,
      stopReason: this.stopReason ?? 'end_turn',
      usage: {
        inputTokens: usage.input_tokens ?? 0,
        outputTokens: usage.output_tokens ?? 0,
        cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
        cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
      },
    };
  }

  private start(block: Record<string, unknown>): void {
    const text = (key: string) => (typeof block[key] === 'string' ? (block[key] as string) : '');
    this.blocks.push({ type: String(block.type), block, text: text('text'), thinking: text('thinking'), signature: text('signature'), json: undefined });
  }
}
