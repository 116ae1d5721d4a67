// Compaction through the journal: where the conversation is cut (the last turns kept whole), the
// summary request (the run's own system prompt and tools, the instruction last), the conversation it
// leaves (the task, the summary under its header, the kept turns), a summary asked twice before the
// run stops with ESUMMARY, and results cut harder when even the summary request is too long (ECONTEXT
// when nothing fits). The journal is stood in for by its step(), which runs the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compact, contextTokens, cutIndex, isPromptTooLong, refusedTokens, whyUnusable, type CompactContext } from '../../src/agent/compaction.js';
import { ContextWindowError, ModelError, UnusableSummaryError } from '../../src/errors/index.js';
import type { RunConfig } from '../../src/journal/entry.js';
import { isCompactionRequest, summarizedTurns } from '../../src/model/compaction.js';
import type { Message, ModelRequest, ModelResponse } from '../../src/model/types.js';
import type { RunJournal } from '../../src/valve/run-journal.js';

const USAGE = { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 3, cacheReadInputTokens: 4 };
const answer = (content: ModelResponse['content']): ModelResponse => ({ model: 'claude-a', content, stopReason: 'end_turn', usage: USAGE });
const config = { model: 'claude-a', system: 'sys', tools: [{ name: 't', description: 'd', input_schema: {} }], maxTokens: 50, compaction: { enabled: true, at: 0.8, contextWindow: 1000 } } as RunConfig;
const tooLong = () => new ModelError({ model: 'claude-a', baseURL: 'http://x', kind: 'status', status: 400, apiMessage: 'prompt is too long: 2000 tokens > 1000 maximum', retries: 0 });

// user, then (assistant, user) × turns: a run's conversation with `turns` model turns.
function conversation(turns: number, result = 'ok'): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'the task' }];
  for (let i = 1; i <= turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `c${i}`, name: 'run_bash', input: {} }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `c${i}`, content: result }] });
  }
  return messages;
}

// A context whose journal runs each step and whose model answers `answers` in turn, keeping the requests.
function context(answers: Array<ModelResponse | Error>) {
  const requests: ModelRequest[] = [];
  const steps: unknown[] = [];
  const journal = { run: 'fix-1a2b', step: async (_kind: string, input: unknown, run: () => Promise<unknown>) => (steps.push(input), run()) } as unknown as RunJournal;
  const provider = { complete: async (request: ModelRequest) => {
    requests.push(request);
    const next = answers.shift()!;
    if (next instanceof Error) throw next;
    return next;
  } };
  const ctx: CompactContext = { journal, config, task: 'the task', provider: () => provider as never };
  return { ctx, requests, steps };
}

test('the cut keeps the last turns whole, or the last one when there are fewer, and nothing when nothing lies before it', () => {
  const messages = conversation(4);
  assert.equal(cutIndex(messages, 2), 5);
  assert.equal(cutIndex(conversation(1), 2), undefined);
  assert.equal(cutIndex(conversation(2), 3), 3);
});

test("a summary replaces the turns before the cut: the request ends with the instruction, the run's prompt and tools kept", async () => {
  const { ctx, requests, steps } = context([answer([{ type: 'text', text: ' the summary ' }])]);
  const messages = conversation(4);
  const done = await compact(ctx, messages, { reason: 'threshold', tokensBefore: 900, keepTurns: 2 });
  assert.ok(done?.messages);
  assert.equal(requests.length, 1);
  assert.ok(isCompactionRequest(requests[0]!.messages));
  assert.deepEqual([requests[0]!.system, requests[0]!.tools, requests[0]!.messages.length], ['sys', config.tools, 5]);
  assert.deepEqual(done.messages.slice(1), messages.slice(5));
  assert.equal(summarizedTurns(done.messages), 2);
  assert.match(JSON.stringify(done.messages[0]), /the task.*Summary of the earlier conversation: 2 model turns.*the summary/);
  assert.deepEqual({ summary: done.result.summary, summarized: done.result.summarizedMessages, kept: done.result.keptMessages }, { summary: 'the summary', summarized: 5, kept: 4 });
  assert.ok(done.result.tokensAfter < 900);
  assert.deepEqual((steps[0] as { summarize: number; reason: string }).summarize, 5);
});

test('an answer that is no summary is asked once more; twice, the run stops with ESUMMARY and both calls are paid for', async () => {
  const again = context([answer([{ type: 'tool_use', id: 'x', name: 'read_file', input: {} }]), answer([{ type: 'text', text: 'summary' }])]);
  const done = await compact(again.ctx, conversation(3), { reason: 'requested', tokensBefore: 10, keepTurns: 1 });
  assert.equal(again.requests.length, 2);
  assert.equal(done?.result.summary, 'summary');
  assert.deepEqual(done?.result.usage, { inputTokens: 2, outputTokens: 4, cacheCreationInputTokens: 6, cacheReadInputTokens: 8 });
  const twice = context([answer([]), answer([{ type: 'tool_use', id: 'x', name: 'edit_file', input: {} }])]);
  await assert.rejects(compact(twice.ctx, conversation(3), { reason: 'threshold', tokensBefore: 10, keepTurns: 1 }), (error: unknown) => error instanceof UnusableSummaryError && error.code === 'ESUMMARY' && /answered with nothing, then a call of edit_file/.test(error.message));
});

test('a summary request too long is sent again with results cut to 2,000 then 200 characters; then ECONTEXT', async () => {
  const big = 'x'.repeat(5000);
  const shortened = context([tooLong(), tooLong(), answer([{ type: 'text', text: 's' }])]);
  await compact(shortened.ctx, conversation(3, big), { reason: 'prompt-too-long', tokensBefore: 10, keepTurns: 1 });
  const resultLength = (request: ModelRequest) => JSON.stringify(request.messages[2]).length;
  assert.deepEqual(shortened.requests.map(resultLength).map((n) => n > 5000 ? 'whole' : n > 2000 ? '2000' : '200'), ['whole', '2000', '200']);
  assert.match(JSON.stringify(shortened.requests[1]!.messages[2]), /cut for the summary; the journal keeps it whole/);
  const never = context([tooLong(), tooLong(), tooLong()]);
  await assert.rejects(compact(never.ctx, conversation(3, big), { reason: 'prompt-too-long', tokensBefore: 10, keepTurns: 1 }), (error: unknown) => error instanceof ContextWindowError && error.code === 'ECONTEXT' && /the API said "prompt is too long: 2000 tokens > 1000 maximum"/.test(error.message));
  const other = context([new Error('network down')]);
  await assert.rejects(compact(other.ctx, conversation(3), { reason: 'threshold', tokensBefore: 10, keepTurns: 1 }), /network down/);
});

test("the window's fill, the API's too-long refusal and the size it states", () => {
  assert.equal(contextTokens(USAGE), 10);
  assert.equal(isPromptTooLong(tooLong()), true);
  assert.equal(isPromptTooLong(new Error('prompt is too long')), false);
  assert.equal(refusedTokens('prompt is too long: 212345 tokens > 200000 maximum', 5), 212345);
  assert.equal(refusedTokens(undefined, 5), 5);
  assert.equal(whyUnusable(answer([{ type: 'text', text: '  ' }])), 'nothing');
  assert.equal(whyUnusable(answer([{ type: 'text', text: 'fine' }])), undefined);
});
