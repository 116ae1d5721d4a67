// A run's commands' process groups in this process: each recorded with the step the run stands at
// when it starts, forgotten when it ends, and stopped when the run's lock is lost (taken over).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunCommands } from '../../src/journal/run-commands.js';
import type { RunLocal } from '../../src/journal/journal-storage.js';
import type { RunLock } from '../../src/locks/run-lock.js';
import { startProcess } from '../../src/os/processes.js';

test('RunCommands records each group with the step now, forgets it when it ends, and stops the live ones when the lock is lost', async () => {
  const calls: unknown[][] = [];
  const local = {
    trackCommand: (...args: unknown[]) => void calls.push(['track', ...args]),
    untrackCommand: (...args: unknown[]) => void calls.push(['untrack', ...args]),
  } as unknown as RunLocal;
  const lost: Array<() => void> = [];
  const lock = { onLost: (handler: () => void) => void lost.push(handler) } as unknown as RunLock;
  let step = 3;
  const commands = new RunCommands(local, 'fix-1a2b3c', lock, () => step);

  const child = startProcess('sleep', ['60'], { group: true });
  const pgid = child.pid!;
  commands.track(pgid, 'run_bash "sleep 60"');
  step = 4;
  commands.track(999_999, 'run_bash "serve" in the background (bg-1)', true);
  commands.untrack(999_999);
  assert.deepEqual(calls, [
    ['track', 'fix-1a2b3c', pgid, 3, 'run_bash "sleep 60"', false],
    ['track', 'fix-1a2b3c', 999_999, 4, 'run_bash "serve" in the background (bg-1)', true],
    ['untrack', 'fix-1a2b3c', 999_999],
  ]);

  assert.equal(lost.length, 1, 'it listens for the lock being lost');
  lost[0]!();
  const exit = await child.exited;
  assert.equal(exit.signal, 'SIGTERM', 'the group still tracked is stopped');
});
