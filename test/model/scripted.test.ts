// The scripted provider: deterministic answers picked by the conversation, with real, abortable delays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createScriptedProvider, type Script } from '../../src/model/scripted.js';
import type { AssistantBlock, Message, ModelRequest } from '../../src/model/types.js';

const script: Script = {
  model: 'scripted-demo',
  turns: [
    { text: "I'll look at the failing test first.", tools: [{ name: 'read_file', input: { path: 'test.js' } }, { name: 'run_bash', input: { command: 'npm test' } }] },
    { text: 'Done: the bug was an off-by-one.', usage: { inputTokens: 1200, outputTokens: 80 } },
  ],
};

function request(messages: Message[]): ModelRequest {
  return { model: 'scripted-demo', system: 'Be careful.', messages, tools: [], maxTokens: 1000 };
}

// The conversation after `turns` assistant answers, the way the agent loop builds it.
function conversation(assistantTurns: AssistantBlock[][]): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'Fix the test.' }];
  for (const content of assistantTurns) {
    messages.push({ role: 'assistant', content });
    const results = content.filter((block) => block.type === 'tool_use').map((block) => ({ type: 'tool_result' as const, tool_use_id: block.id, content: 'ok' }));
    messages.push({ role: 'user', content: results.length ? results : 'go on' });
  }
  return messages;
}

test('the same request always gets the same answer, ids and usage included', async () => {
  const first = await createScriptedProvider(script).complete(request(conversation([])));
  const again = await createScriptedProvider(script).complete(request(conversation([])));
  assert.deepEqual(again, first);
  assert.deepEqual(first.content, [
    { type: 'text', text: "I'll look at the failing test first." },
    { type: 'tool_use', id: 'toolu_s0_0', name: 'read_file', input: { path: 'test.js' } },
    { type: 'tool_use', id: 'toolu_s0_1', name: 'run_bash', input: { command: 'npm test' } },
  ]);
  assert.equal(first.stopReason, 'tool_use');
  assert.equal(first.model, 'scripted-demo');
});

test('the turn answered is the number of assistant messages in the request, so a new process resumes at the right turn', async () => {
  const first = await createScriptedProvider(script).complete(request(conversation([])));
  // A fresh provider, as after a crash: nothing remembered, only the conversation.
  const resumed = createScriptedProvider(script, { name: 'script:demo.json' });
  const second = await resumed.complete(request(conversation([first.content])));
  assert.deepEqual(second.content, [{ type: 'text', text: 'Done: the bug was an off-by-one.' }]);
  assert.equal(second.stopReason, 'end_turn');
  assert.deepEqual(second.usage, { inputTokens: 1200, outputTokens: 80, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
  assert.equal(resumed.name, 'script:demo.json');
});

test('usage left out is estimated from the sizes of the request and the answer', async () => {
  const provider = createScriptedProvider({ turns: [{ text: 'x'.repeat(400) }] });
  const small = await provider.complete(request(conversation([])));
  const big = await provider.complete(request([{ role: 'user', content: 'y'.repeat(4000) }]));
  assert.equal(small.usage.outputTokens, 100);
  assert.ok(big.usage.inputTokens > small.usage.inputTokens + 900, `${big.usage.inputTokens} vs ${small.usage.inputTokens}`);
  assert.equal(small.usage.cacheReadInputTokens, 0);
});

test('past the last turn it answers with an end_turn text saying the script ran out', async () => {
  const provider = createScriptedProvider({ turns: [{ text: 'Only answer.' }] }, { name: 'script:one.json' });
  const response = await provider.complete(request(conversation([[{ type: 'text', text: 'Only answer.' }]])));
  assert.equal(response.stopReason, 'end_turn');
  assert.equal(response.content.length, 1);
  assert.match((response.content[0] as { text: string }).text, /script:one\.json has run out: it has 1 turn/);
});

test('a turn with a delay waits for real and streams its text in pieces across it', async () => {
  const text = 'Reading the test file to see which assertion fails and why.';
  const provider = createScriptedProvider({ turns: [{ text, delayMs: 200 }] });
  // A timer due halfway through the delay marks its middle: Node fires timers in the order they are
  // due, so the first piece (due at 200 ms / pieces) comes before it and the answer only after it.
  const events: string[] = [];
  const halfway = setTimeout(() => events.push('halfway'), 100);
  const pieces: string[] = [];
  await provider.complete(request(conversation([])), {
    onText: (piece) => {
      pieces.push(piece);
      events.push('piece');
    },
  });
  clearTimeout(halfway);
  events.push('answered');
  assert.ok(pieces.length >= 3, `only ${pieces.length} pieces`);
  assert.equal(pieces.join(''), text);
  assert.equal(events[0], 'piece', 'the first piece came only at the end');
  assert.ok(events.includes('halfway') && events.indexOf('halfway') < events.lastIndexOf('piece'), 'the delay was not waited');
});

test('aborting during the delay rejects at once with the abort reason', async () => {
  const provider = createScriptedProvider({ turns: [{ text: 'slow answer', delayMs: 10_000 }] });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const pieces: string[] = [];
  await assert.rejects(provider.complete(request(conversation([])), { signal: controller.signal, onText: (piece) => pieces.push(piece) }), { name: 'AbortError' });
  // The first piece is due a part of the way into the ten seconds: none came, the abort did not wait.
  assert.deepEqual(pieces, []);
  await assert.rejects(provider.complete(request(conversation([])), { signal: controller.signal }), { name: 'AbortError' });
});

test('answers do not share objects with the script', async () => {
  const provider = createScriptedProvider(script);
  const first = await provider.complete(request(conversation([])));
  (first.content[1] as { input: Record<string, unknown> }).input.path = 'changed.js';
  const again = await provider.complete(request(conversation([])));
  assert.deepEqual((again.content[1] as { input: Record<string, unknown> }).input, { path: 'test.js' });
});

test('a script written in code is checked like a file', () => {
  assert.throws(() => createScriptedProvider({ turns: [{ tools: [{ name: '' }] }] }), { code: 'ESCRIPT', message: /turns\[0\]\.tools\[0\] without a "name"/ });
});
