// Which subagents the journal holds past a parent's last recorded step: a subagent run of a task step
// after it (within an answer's reach) means the tree moved on beyond the parent's last checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subagentRunId } from '../../src/journal/run-id.js';
import type { JournalStore } from '../../src/journal/store.js';
import { subagentsUnderway } from '../../src/session/subagent-runs.js';

// A store whose runs/ folder holds `runs` (undefined: no runs folder at all), refreshed before it is read.
function store(runs: string[] | undefined) {
  let refreshed = 0;
  const fake = { refresh: async () => void refreshed++, treeAt: async (path: string) => (assert.equal(path, 'runs'), runs && new Set(runs)) } as unknown as JournalStore;
  return { fake, refreshed: () => refreshed };
}

test('a subagent of a task step after the last recorded one is underway; one at or before it is not', async () => {
  const after = store([subagentRunId('parent-1a2b', 7)]);
  assert.equal(await subagentsUnderway(after.fake, 'parent-1a2b', 5), true);
  assert.equal(after.refreshed(), 1, 'the store is refreshed first (another process may have written)');
  assert.equal(await subagentsUnderway(store([subagentRunId('parent-1a2b', 5)]).fake, 'parent-1a2b', 5), false);
  assert.equal(await subagentsUnderway(store([subagentRunId('other-9f9f', 7)]).fake, 'parent-1a2b', 5), false);
  assert.equal(await subagentsUnderway(store(undefined).fake, 'parent-1a2b', 5), false);
});

test("only an answer's reach past the last step is looked at", async () => {
  assert.equal(await subagentsUnderway(store([subagentRunId('p-1a2b', 64)]).fake, 'p-1a2b', 0), true);
  assert.equal(await subagentsUnderway(store([subagentRunId('p-1a2b', 65)]).fake, 'p-1a2b', 0), false);
});
