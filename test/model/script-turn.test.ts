// One scripted turn as a model response, deterministically: which turn a request asks for (assistant
// messages plus the turns a compaction summarized), its blocks, ids, stop reason and estimated usage,
// the answers for a compaction and for a script that ran out, thinking signatures, streamed chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summaryMessage } from '../../src/model/compaction.js';
import { ranOutTurn, summaryTurn, textChunks, thinkingSignature, turnIndex, turnResponse } from '../../src/model/script-turn.js';

test('the turn asked for counts assistant messages and the turns a summary stands for', () => {
  assert.equal(turnIndex([{ role: 'user', content: 't' }]), 0);
  assert.equal(turnIndex([{ role: 'user' }, { role: 'assistant' }, { role: 'user' }, { role: 'assistant' }]), 2);
  assert.equal(turnIndex([summaryMessage('t', 's', 5), { role: 'assistant', content: 'x' }]), 6);
});

test('a turn becomes its thinking, text and calls, with ids of its position and usage from the sizes', () => {
  const tools = [{ name: 'read_file', input: { path: 'a' } }, { name: 'search' }];
  const response = turnResponse({ thinking: 'think', text: 'Reading.', tools } as never, 3, 'scripted', 401);
  assert.deepEqual(response.content, [
    { type: 'thinking', thinking: 'think', signature: thinkingSignature('think') },
    { type: 'text', text: 'Reading.' },
    { type: 'tool_use', id: 'toolu_s3_0', name: 'read_file', input: { path: 'a' } },
    { type: 'tool_use', id: 'toolu_s3_1', name: 'search', input: {} },
  ]);
  assert.equal(response.stopReason, 'tool_use');
  assert.equal(response.usage.inputTokens, 101);
  assert.equal(response.usage.outputTokens, Math.ceil((8 + 5 + JSON.stringify(tools).length) / 4));
  (response.content[2] as { input: { path: string } }).input.path = 'changed';
  assert.equal(tools[0]!.input!.path, 'a', "the script's input is not the response's");
  const given = turnResponse({ text: 'done', stopReason: 'max_tokens', usage: { inputTokens: 7, cacheReadInputTokens: 2 } } as never, 0, 'm', 0);
  assert.deepEqual([given.stopReason, given.usage], ['max_tokens', { inputTokens: 7, outputTokens: 1, cacheCreationInputTokens: 0, cacheReadInputTokens: 2 }]);
  assert.equal(turnResponse({ text: 'final' } as never, 0, 'm', 0).stopReason, 'end_turn');
});

test("a compaction's summary and a script that ran out end cleanly, in words", () => {
  assert.deepEqual(summaryTurn('mine', []), { text: 'mine' });
  assert.deepEqual(summaryTurn(undefined, [{ role: 'assistant' }, { role: 'assistant' }]), { text: 'Summary of turns 1 to 2: the scripted model worked through its script up to here.' });
  assert.deepEqual(ranOutTurn('turns.json', 1), { text: 'The script turns.json has run out: it has 1 turn and was asked for another, so this run stops here.' });
  assert.match(ranOutTurn('t', 3).text!, /it has 3 turns/);
});

test('a signature is a digest of the thinking; text streams in at most four pieces that join back', () => {
  assert.equal(thinkingSignature('a'), thinkingSignature('a'));
  assert.notEqual(thinkingSignature('a'), thinkingSignature('b'));
  assert.match(thinkingSignature('a'), /^sig_[\w-]{32}$/);
  const text = 'one two three four five six seven';
  const chunks = textChunks(text);
  assert.ok(chunks.length <= 4 && chunks.length > 1);
  assert.equal(chunks.join(''), text);
  assert.deepEqual(textChunks(''), []);
  assert.deepEqual(textChunks('word'), ['word']);
});
