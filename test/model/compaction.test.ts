// The words of compaction both sides know: a compaction request ends with the instruction; a
// compacted conversation's first message carries the task and the summary under a header that
// says how many turns it stands for (read back to keep a script on the right turn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMPACT_INSTRUCTION, isCompactionRequest, summarizedTurns, summaryHeader, summaryMessage } from '../../src/model/compaction.js';

test('a request is a compaction request only when its last user block is the instruction', () => {
  assert.equal(isCompactionRequest([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'text', text: COMPACT_INSTRUCTION }] }]), true);
  assert.equal(isCompactionRequest([{ role: 'user', content: COMPACT_INSTRUCTION }]), false, 'a plain string is a person typing it');
  assert.equal(isCompactionRequest([{ role: 'user', content: [{ type: 'text', text: COMPACT_INSTRUCTION }, { type: 'text', text: 'after' }] }]), false);
  assert.equal(isCompactionRequest([]), false);
});

test('the summary message reads back the turns it stands for; a conversation never compacted stands for none', () => {
  const message = summaryMessage('fix it', '  did things \n', 3);
  assert.deepEqual(message, { role: 'user', content: [{ type: 'text', text: 'fix it' }, { type: 'text', text: `${summaryHeader(3)}\n\ndid things` }] });
  assert.equal(summarizedTurns([message]), 3);
  assert.equal(summaryHeader(1), '[Summary of the earlier conversation: 1 model turn compacted by savepoint; every original message is kept in its journal.]');
  assert.equal(summarizedTurns([summaryMessage('t', 's', 1)]), 1);
  assert.equal(summarizedTurns([{ role: 'user', content: 'plain' }]), 0);
  assert.equal(summarizedTurns([]), 0);
});
