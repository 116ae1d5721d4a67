// The repair of an answer's event stream before the SDK reads it: a stream with nothing to repair
// comes out byte for byte, however it is cut into chunks (inside a multi-byte character too); a
// message_delta without usage gets message_start's; a finished answer's tool call whose input is
// not JSON loses its input pieces and is reported, while a cut-off answer keeps them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { streamRepair, type StreamRepairs } from '../../src/model/stream-repair.js';

const frame = (data: object) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;

function answer(options: { json?: string; stopReason?: string; usage?: boolean } = {}): string {
  return [
    frame({ type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 3 } } }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo ✓ wörld' } }),
    frame({ type: 'content_block_stop', index: 0 }),
    frame({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't1', name: 'read_file', input: {} } }),
    frame({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: (options.json ?? '{"path":"a"}').slice(0, 4) } }),
    frame({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: (options.json ?? '{"path":"a"}').slice(4) } }),
    frame({ type: 'content_block_stop', index: 1 }),
    frame({ type: 'message_delta', delta: { stop_reason: options.stopReason ?? 'tool_use', stop_sequence: null }, ...(options.usage === false ? {} : { usage: { output_tokens: 9 } }) }),
    frame({ type: 'message_stop' }),
  ].join('');
}

// The stream as the SDK would read it after the repair, sent in chunks of `size` bytes.
async function repaired(sse: string, size: number): Promise<{ text: string; repairs: StreamRepairs }> {
  const bytes = new TextEncoder().encode(sse);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
      controller.close();
    },
  });
  const repairs: StreamRepairs = { invalidInputs: new Map() };
  const middleware = streamRepair(repairs) as unknown as (request: unknown, next: () => Promise<Response>) => Promise<Response>;
  const response = await middleware({}, async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
  return { text: await response.text(), repairs };
}

const events = (text: string) => text.split('\n\n').filter(Boolean).map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Record<string, unknown>);

test('a stream with nothing to repair comes out byte for byte, in chunks of any size', async () => {
  const sse = answer();
  for (const size of [1, 2, 3, 7, 64, sse.length]) {
    const { text, repairs } = await repaired(sse, size);
    assert.equal(text, sse, `chunks of ${size}`);
    assert.equal(repairs.invalidInputs.size, 0);
  }
});

test("a message_delta without usage gets message_start's output tokens, and nothing else changes", async () => {
  const { text } = await repaired(answer({ usage: false }), 5);
  const delta = events(text).find((e) => e.type === 'message_delta')!;
  assert.deepEqual(delta.usage, { output_tokens: 3 });
  assert.deepEqual(events(text).filter((e) => e.type !== 'message_delta'), events(answer()).filter((e) => e.type !== 'message_delta'));
});

test('input that is not JSON loses its pieces and is reported in a finished answer, and is kept whole in a cut-off one', async () => {
  const bad = '{"path": nope}';
  const finished = await repaired(answer({ json: bad }), 11);
  assert.deepEqual([...finished.repairs.invalidInputs], [[1, bad]]);
  assert.equal(events(finished.text).filter((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta').length, 0);
  assert.equal(events(finished.text).filter((e) => e.type === 'content_block_stop').length, 2, 'the block still ends');
  const cut = await repaired(answer({ json: '{"path":"a', stopReason: 'max_tokens' }), 11);
  assert.equal(cut.repairs.invalidInputs.size, 0);
  assert.equal(events(cut.text).filter((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta').length, 2);
});
