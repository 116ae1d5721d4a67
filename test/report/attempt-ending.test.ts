// How an attempt ended, in the one set of words `log` and the HTML timeline share, and which endings
// are bad news (a crash, a failure).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attemptEndingText, endedBadly } from '../../src/report/attempt-ending.js';
import type { AttemptEnding, AttemptView } from '../../src/report/summary-types.js';

function attempt(ended: Partial<AttemptEnding> & Pick<AttemptEnding, 'how'>, fields: Partial<AttemptView> = {}): AttemptView {
  return { number: 1, startedAt: '', host: 'h', pid: 1, firstLiveStep: 1, replayedSteps: 0, liveSteps: 3, leftInFlight: null, rerun: null, interruptedAt: null, ended: { at: null, limit: null, error: null, ...ended } as AttemptEnding, ...fields };
}

test('each ending in words', () => {
  const cases: Array<[AttemptView, string]> = [
    [attempt({ how: 'finished' }), 'finished with the final answer'],
    [attempt({ how: 'limit', limit: 'max-steps' }), 'stopped at --max-steps'],
    [attempt({ how: 'limit' }), 'stopped at --a limit'],
    [attempt({ how: 'interrupted' }), 'interrupted'],
    [attempt({ how: 'interrupted' }, { leftInFlight: 4 }), 'interrupted (#4 in flight)'],
    [attempt({ how: 'failed', error: 'EMODEL: overloaded' }), 'failed: EMODEL: overloaded'],
    [attempt({ how: 'failed' }), 'failed'],
    [attempt({ how: 'crashed' }, { leftInFlight: 0 }), 'crashed with #0 in flight'],
    [attempt({ how: 'crashed' }), 'crashed'],
    [attempt({ how: 'crashed' }, { liveSteps: 0 }), 'killed before it recorded anything'],
    [attempt({ how: 'crashed' }, { liveSteps: 0, rerun: 6 }), 'killed before it recorded anything, while running #6 again'],
    [attempt({ how: 'running' }), 'running'],
  ];
  for (const [view, words] of cases) assert.equal(attemptEndingText(view), words);
});

test('only a crash or a failure is bad news', () => {
  assert.deepEqual((['finished', 'limit', 'interrupted', 'failed', 'crashed', 'running'] as const).map((how) => endedBadly(attempt({ how }))), [false, false, false, true, true, false]);
});
