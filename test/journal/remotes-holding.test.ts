// Which remotes' fetched journals hold a run (journal/sync.ts remotesHolding): a run there is fenced
// against that remote when it goes on. Only remote-tracking journals count, only remotes still
// configured, `origin` first and the rest by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { remotesHolding } from '../../src/journal/sync.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('the configured remotes whose fetched journal holds the run, origin first; the local journal alone counts for nothing', async () => {
  const repo = await scratch.repo();
  const store = await JournalStore.open(repo.root);
  await store.append([{ path: 'runs/alpha/run.json', content: '{}\n' }], 'alpha run.json');
  const withAlpha = store.tip!;
  assert.deepEqual(await remotesHolding(store, 'alpha'), [], 'only in the local journal');
  await store.append([{ path: 'runs/beta/run.json', content: '{}\n' }], 'beta run.json');
  for (const remote of ['zeta', 'origin', 'backup', 'gone']) await gitOut(repo.root, ['update-ref', `refs/remotes/${remote}/agent-journal`, remote === 'zeta' ? withAlpha : store.tip!]);
  for (const remote of ['zeta', 'origin', 'backup']) await gitOut(repo.root, ['remote', 'add', remote, `/nowhere/${remote}.git`]);
  assert.deepEqual(await remotesHolding(store, 'alpha'), ['origin', 'backup', 'zeta'], "'gone' is not configured");
  assert.deepEqual(await remotesHolding(store, 'beta'), ['origin', 'backup'], "zeta's journal predates beta");
  assert.deepEqual(await remotesHolding(store, 'other'), []);
});
