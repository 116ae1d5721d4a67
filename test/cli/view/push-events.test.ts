// What --push tells the person as the run goes: a failure retried, a push that reached the remote
// although git said it failed, pushes landing again, and what the run ended with off the remote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pushEventText } from '../../../src/cli/view/push-events.js';

test('a retried failure says when it is tried again and for how long pushes have failed', () => {
  assert.equal(pushEventText({ type: 'push-retrying', remote: 'origin', reason: 'timeout', waitMs: 1500, failingForMs: 12_400 } as never), 'Pushing the journal to origin failed (timeout); the run goes on, and the push is tried again in 1.5 s (failing for 12 s).');
  assert.match(pushEventText({ type: 'push-retrying', remote: 'origin', reason: 'x', waitMs: 250 } as never), /again in 0\.25 s\.$/);
});

test('reached, caught up, and left behind, with the command that pushes the rest', () => {
  assert.equal(pushEventText({ type: 'push-reached', remote: 'origin', reported: 'error: RPC failed', commit: '0123456789abcdef' } as never), 'The push reached origin but git reported a failure (error: RPC failed): origin has the journal up to 0123456789ab, so nothing is lost.');
  assert.equal(pushEventText({ type: 'push-caught-up', remote: 'origin', failures: 1 } as never), 'Pushes to origin land again (after 1 failed try).');
  assert.equal(pushEventText({ type: 'push-caught-up', remote: 'origin', failures: 3 } as never), 'Pushes to origin land again (after 3 failed tries).');
  assert.equal(pushEventText({ type: 'push-behind', remote: 'origin', unpushed: ['#4', '#5', 'run.json'], reason: 'down', command: 'git push origin agent-journal' } as never), "Not on origin: steps 4, 5 and the run's record (run.json) (down). They are recorded here; push them later with: git push origin agent-journal");
  assert.match(pushEventText({ type: 'push-behind', remote: 'o', unpushed: ['#9'], reason: 'r', command: 'c' } as never), /^Not on o: step 9 \(r\)/);
});

test("git's words are printed with control characters shown", () => {
  assert.doesNotMatch(pushEventText({ type: 'push-retrying', remote: 'ev\x1bil', reason: '\x1b[31mred', waitMs: 1 } as never), /\x1b/);
});
