// Aborting the same way everywhere: a stopped call rejects with its signal's reason (an AbortError
// unless the caller gave one), and sleep gives up its wait as soon as the signal fires.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { abortReason, sleep } from '../../src/model/abort.js';

test("the signal's own reason, else an AbortError", () => {
  const plain = new AbortController();
  plain.abort();
  assert.equal((abortReason(plain.signal) as DOMException).name, 'AbortError');
  const given = new AbortController();
  const why = new Error('the person pressed Esc');
  given.abort(why);
  assert.equal(abortReason(given.signal), why);
});

test('sleep resolves after its time, rejects at once for an aborted signal, and stops waiting when it fires', async () => {
  await sleep(1);
  const done = new AbortController();
  done.abort(new Error('already'));
  await assert.rejects(sleep(60_000, done.signal), /already/);
  const later = new AbortController();
  const waiting = sleep(60_000, later.signal);
  later.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/); // a minute's timer would hold the test: the abort cleared it
});
