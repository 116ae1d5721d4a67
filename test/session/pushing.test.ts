// `--push` in a run's life: the pusher's limits from the flags, else the environment (a bad value is a
// UsageError naming the variable), no pusher without --push, what is left flushed at the end (a
// push-behind event naming what did not land), and the fence's advice on a fetched run's failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PushFailedError, PushRejectedError, PushStalledError, UsageError } from '../../src/errors/index.js';
import type { JournalPusher } from '../../src/journal/pusher.js';
import type { JournalStore } from '../../src/journal/store.js';
import { createRunPusher, flushRunPushes, pusherOptions, withFenceAdvice } from '../../src/session/pushing.js';
import type { SessionEvent } from '../../src/session/types.js';

test('limits come from the flags, else the environment, in seconds; unset leaves the defaults', () => {
  assert.deepEqual(pusherOptions({ pushTimeout: 2, pushRetry: 0.5 }, { SAVEPOINT_PUSH_TIMEOUT: '9' }), { timeoutMs: 2000, retryForMs: 500 });
  assert.deepEqual(pusherOptions({}, { SAVEPOINT_PUSH_TIMEOUT: '3', SAVEPOINT_PUSH_RETRY: '1.5' }), { timeoutMs: 3000, retryForMs: 1500 });
  assert.deepEqual(pusherOptions({}, { SAVEPOINT_PUSH_TIMEOUT: '' }), {});
});

test('an environment value that is not a positive number is a UsageError naming the variable and its flag', () => {
  for (const value of ['0', '-1', 'soon', ' ', 'Infinity']) {
    assert.throws(() => pusherOptions({}, { SAVEPOINT_PUSH_RETRY: value }), (error: unknown) => error instanceof UsageError && error.message === `SAVEPOINT_PUSH_RETRY needs a number of seconds above 0 (as --push-retry takes), not "${value}".`, value);
  }
  assert.doesNotThrow(() => pusherOptions({ pushRetry: 1 }, { SAVEPOINT_PUSH_RETRY: 'soon' }), 'a flag wins before the environment is read');
});

test('no --push, no pusher; a flush of none is nothing', async () => {
  assert.equal(createRunPusher({} as JournalStore, 'r', {}, {}, () => {}), undefined);
  assert.equal(await flushRunPushes(undefined, () => assert.fail('no event')), undefined);
});

test('a flush that leaves appends behind says which and how to push them, closes the pusher and hands back why', async () => {
  const events: SessionEvent[] = [];
  const failure = new Error('remote hung up');
  let closed = false;
  const pusher = { flush: async (cap?: number) => (assert.equal(cap, 250), { remote: 'origin', unpushed: ['#4', 'run.json'], reason: 'remote hung up', error: failure }), close: () => void (closed = true) } as unknown as JournalPusher;
  assert.equal(await flushRunPushes(pusher, (event) => events.push(event), 250), failure);
  assert.ok(closed);
  assert.deepEqual(events, [{ type: 'push-behind', remote: 'origin', unpushed: ['#4', 'run.json'], reason: 'remote hung up', command: 'git push origin agent-journal' }]);
  const landed = { flush: async () => ({ remote: 'origin', unpushed: [] }), close: () => {} } as unknown as JournalPusher;
  assert.equal(await flushRunPushes(landed, () => assert.fail('nothing left behind')), undefined);
});

test("a fetched run's push failure says how to go on without the fence; a rejection (the fence working) and an asked push do not", () => {
  const failed = withFenceAdvice(new PushFailedError('backup', 'fatal: unreachable'), 'backup');
  assert.match(failed.message, /because backup's journal holds it .* --no-push goes on without the fence/);
  const stalled = withFenceAdvice(new PushStalledError({ remote: 'backup', run: 'r', reason: 'timeout', failingSeconds: 3 }), 'backup');
  assert.match(stalled.message, /--no-push goes on without the fence/);
  const rejected = new PushRejectedError('r', 'backup', ['#3']);
  const before = rejected.message;
  assert.equal(withFenceAdvice(rejected, 'backup').message, before);
  assert.doesNotMatch(withFenceAdvice(new PushFailedError('origin', 'x'), undefined).message, /fence/);
});
