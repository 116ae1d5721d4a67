// Two things real servers send that the SDK's stream helper cannot take, repaired in the event
// stream before the helper reads it (a middleware: the SDK's public way to see a response first).
//
// - A `message_delta` without `usage` (proxies, compatible servers): the helper reads
//   `usage.output_tokens` and fails the whole answer. It gets the usage message_start gave.
// - A tool call whose input is not valid JSON: the helper fails the whole answer at the block's
//   end. Its input pieces are held back until message_delta says why the answer stopped: an answer
//   cut off at max_tokens gets them all (the helper parses a cut-off input as far as it goes, as
//   it does for any), a finished answer gets none for a call whose input does not parse, so the
//   call arrives with the empty input it started with, and the call is reported (`invalidInputs`)
//   for the agent to answer with an error the model can act on.
//
// Everything else passes through as it came, byte for byte.
import type { Middleware } from '@anthropic-ai/sdk';

/** What the repair found in one answer: the tool calls (by block index) whose input was not JSON, with that input. */
export interface StreamRepairs {
  invalidInputs: Map<number, string>;
}

interface HeldCall {
  frames: string[];
  json: string;
}

/** A middleware that repairs the event stream of each streamed answer, telling `repairs` what it did. */
export function streamRepair(repairs: StreamRepairs): Middleware {
  return async (request, next) => {
    const response = await next(request);
    if (!response.ok || !response.body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response;
    repairs.invalidInputs.clear();
    const body = response.body.pipeThrough(repairTransform(repairs));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

// The names of the events the repair looks into; a chunk of whole frames naming none of them (the
// text deltas that make most of an answer) passes through as bytes, never decoded.
const LOOKED_AT = ['"message_start"', '"message_delta"', '"content_block_start"', '"input_json_delta"', '"content_block_stop"'];

function repairTransform(repairs: StreamRepairs): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  let startUsage: Record<string, unknown> = {};
  const held = new Map<number, HeldCall>();
  const flushHeld = (out: string[], keep: (index: number, call: HeldCall) => boolean) => {
    for (const [index, call] of held) {
      if (keep(index, call)) out.push(...call.frames);
      else {
        repairs.invalidInputs.set(index, call.json);
        out.push(...call.frames.filter((frame) => !frame.includes('"input_json_delta"')));
      }
    }
    held.clear();
  };
  const frame = (text: string, out: string[]) => {
    const event = LOOKED_AT.some((name) => text.includes(name)) ? parseFrame(text) : undefined;
    if (!event) return void out.push(text);
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'message_start': {
        const usage = (event.message as { usage?: unknown } | undefined)?.usage;
        if (usage && typeof usage === 'object') startUsage = usage as Record<string, unknown>;
        return void out.push(text);
      }
      case 'content_block_start': {
        const block = event.content_block as { type?: unknown } | undefined;
        if (block?.type === 'tool_use') held.set(index, { frames: [], json: '' });
        return void out.push(text);
      }
      case 'content_block_delta': {
        const call = held.get(index);
        const delta = event.delta as { type?: unknown; partial_json?: unknown } | undefined;
        if (!call || delta?.type !== 'input_json_delta') return void out.push(text);
        call.frames.push(text);
        call.json += typeof delta.partial_json === 'string' ? delta.partial_json : '';
        return;
      }
      case 'content_block_stop': {
        const call = held.get(index);
        if (call) call.frames.push(text);
        else out.push(text);
        return;
      }
      case 'message_delta': {
        const stopReason = (event.delta as { stop_reason?: unknown } | undefined)?.stop_reason;
        flushHeld(out, (_index, call) => stopReason === 'max_tokens' || parses(call.json));
        if (event.usage && typeof event.usage === 'object') return void out.push(text);
        const usage = { output_tokens: typeof startUsage.output_tokens === 'number' ? startUsage.output_tokens : 0 };
        return void out.push(`event: message_delta\ndata: ${JSON.stringify({ ...event, usage })}`);
      }
      default:
        return void out.push(text);
    }
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!pending && held.size === 0 && endsWithBlankLine(chunk)) {
        const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (!LOOKED_AT.some((name) => bytes.includes(name))) return controller.enqueue(chunk);
      }
      pending += decoder.decode(chunk, { stream: true });
      const out: string[] = [];
      for (;;) {
        const end = /\r?\n\r?\n/.exec(pending);
        if (!end) break;
        frame(pending.slice(0, end.index), out);
        pending = pending.slice(end.index + end[0].length);
      }
      if (out.length) controller.enqueue(encoder.encode(out.map((text) => `${text}\n\n`).join('')));
    },
    flush(controller) {
      // A stream that ends without message_delta: what was held goes as it came (the helper then
      // reports the answer as incomplete, in its own words).
      const out: string[] = [];
      flushHeld(out, () => true);
      pending += decoder.decode();
      if (pending) out.push(pending);
      if (out.length) controller.enqueue(encoder.encode(out.map((text) => `${text}\n\n`).join('')));
    },
  });
}

// True when the bytes end a frame (a blank line, \n\n or \r\n\r\n), so nothing of them waits for the next chunk.
function endsWithBlankLine(chunk: Uint8Array): boolean {
  const n = chunk.length;
  return (
    n >= 2 && chunk[n - 1] === 10 && (chunk[n - 2] === 10 || (n >= 4 && chunk[n - 2] === 13 && chunk[n - 3] === 10 && chunk[n - 4] === 13))
  );
}

// The JSON of a frame's data lines, or undefined when it has none that parse.
function parseFrame(text: string): Record<string, unknown> | undefined {
  const data = text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
  if (!data) return undefined;
  try {
    const value: unknown = JSON.parse(data);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function parses(json: string): boolean {
  if (!json) return true;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
