// The turn a run is driven for: what was built when the run opened reads the current turn's
// approver, rules, signal and listener from it, so a held run's next message brings its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunTurn } from '../../src/session/turn.js';
import type { SessionEvent } from '../../src/session/types.js';

test('RunTurn hands out the current turn: its options, its listener, a compact step also as a compaction', () => {
  const first: SessionEvent[] = [];
  const second: SessionEvent[] = [];
  const approveFirst = async () => true;
  const approveSecond = async () => false;
  const turn = new RunTurn({ approve: approveFirst, inFlight: 'report', onEvent: (event) => first.push(event) });
  const { emit } = turn; // taken once, as the run's parts take it
  emit({ type: 'text', text: 'one' });
  assert.equal(turn.approve, approveFirst);
  assert.equal(turn.inFlight, 'report');

  const aborted = new AbortController();
  turn.next({ approve: approveSecond, signal: aborted.signal, onEvent: (event) => second.push(event) });
  emit({ type: 'recorded', position: 7, kind: 'compact', description: 'compact', summary: 'compacted', durationMs: 1, result: { tokensBefore: 900, tokensAfter: 100 } });
  assert.equal(turn.approve, approveSecond);
  assert.equal(turn.inFlight, undefined);
  assert.equal(turn.signal, aborted.signal);
  assert.deepEqual(first, [{ type: 'text', text: 'one' }]);
  assert.deepEqual(
    second.map((event) => event.type),
    ['recorded', 'compaction'],
  );
  assert.deepEqual(second[1], { type: 'compaction', position: 7, replayed: false, tokensBefore: 900, tokensAfter: 100 });
});
