// The conversation the loop sends: its request from the pinned configuration, a step identity that
// changes with every message and with the model, and when it nears the context window (not again
// after a compaction until the next response).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Conversation } from '../../src/agent/conversation.js';
import type { RunConfig } from '../../src/journal/entry.js';

const config = (compaction: Partial<RunConfig['compaction']> = {}): RunConfig => ({ model: 'claude-a', system: 'be brief', tools: [], maxTokens: 100, compaction: { enabled: true, at: 0.5, contextWindow: 1000, ...compaction } }) as RunConfig;
const usage = (input: number) => ({ inputTokens: input, outputTokens: 10, cacheCreationInputTokens: 20, cacheReadInputTokens: 30 });

test('the request holds the pinned configuration and the messages so far', () => {
  const conversation = new Conversation({ ...config(), thinking: { budgetTokens: 50 } } as RunConfig);
  conversation.add({ role: 'user', content: 'hi' });
  assert.deepEqual(conversation.request(), { model: 'claude-a', system: 'be brief', messages: [{ role: 'user', content: 'hi' }], tools: [], maxTokens: 100, thinking: { budgetTokens: 50 } });
});

test("a step's identity names the model and turn and changes with each message and with the model", () => {
  const conversation = new Conversation(config());
  conversation.add({ role: 'user', content: 'hi' });
  const first = conversation.stepInput(1);
  assert.deepEqual([first.model, first.turn, first.messages], ['claude-a', 1, 1]);
  assert.notEqual(new Conversation(config()).stepInput(1).request, first.request, 'an empty conversation is another');
  const same = new Conversation(config());
  same.add({ role: 'user', content: 'hi' });
  assert.equal(same.stepInput(1).request, first.request, 'the same conversation, the same identity');
  conversation.add({ role: 'assistant', content: [{ type: 'text', text: 'hello' }] });
  assert.notEqual(conversation.stepInput(2).request, first.request);
  const before = conversation.stepInput(2).request;
  conversation.useModel('claude-b');
  assert.equal(conversation.request().model, 'claude-b');
  assert.notEqual(conversation.stepInput(2).request, before);
});

test('it nears the window at the threshold, not again after a compaction or a hold until a response', () => {
  const conversation = new Conversation(config());
  conversation.observe(usage(439)); // 439 + 10 + 20 + 30 = 499 of 1000
  assert.equal(conversation.tokens, 499);
  assert.equal(conversation.nearsWindow, false);
  conversation.observe(usage(440));
  assert.equal(conversation.nearsWindow, true);
  conversation.replace([{ role: 'user', content: 'summary' }], 900);
  assert.deepEqual([conversation.nearsWindow, conversation.compactionsInARow, conversation.messages.length], [false, 1, 1]);
  conversation.observe(usage(600));
  assert.deepEqual([conversation.nearsWindow, conversation.compactionsInARow], [true, 0]);
  conversation.hold();
  assert.equal(conversation.nearsWindow, false);
  const off = new Conversation(config({ enabled: false }));
  off.observe(usage(5000));
  assert.equal(off.nearsWindow, false);
});

test('a compaction starts the identity over from the messages it keeps', () => {
  const a = new Conversation(config());
  a.add({ role: 'user', content: 'long' });
  a.add({ role: 'assistant', content: [{ type: 'text', text: 'story' }] });
  a.replace([{ role: 'user', content: 'summary' }], 10);
  const b = new Conversation(config());
  b.add({ role: 'user', content: 'summary' });
  assert.equal(a.stepInput(3).request, b.stepInput(3).request);
});
