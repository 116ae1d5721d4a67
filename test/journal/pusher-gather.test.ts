// The pusher gathers appends that come together into one push (pusher.ts GATHER_MS): a final answer
// and the run's record at its end, a batch of reads. Nothing waits for that push, so it starts a
// moment later; the run's end (flush) pushes at once, carrying both.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { JournalPusher } from '../../src/journal/pusher.js';
import { JournalStore } from '../../src/journal/store.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('two appends that come together, then the run end: one push carries both', async () => {
  const repo = await scratch.repo();
  const remote = join(scratch.dir('savepoint-remote-'), 'origin.git');
  await gitOut(repo.root, ['init', '-q', '--bare', remote]);
  await repo.git('remote', 'add', 'origin', remote);
  const store = await JournalStore.open(repo.root);
  const answer = await store.append([{ path: 'runs/r/steps/000/000001-model.json', content: '{}\n' }], 'r #1 model turn');
  const record = await store.append([{ path: 'runs/r/run.json', content: '{"status":"finished"}\n' }], 'r finished');
  const pusher = new JournalPusher(() => store, 'origin', 'r');
  try {
    // As the store tells it: the final answer's append, then the run's record, then the run's end.
    await Promise.all([pusher.afterAppend(answer), pusher.afterAppend(record)]);
    assert.deepEqual(await pusher.flush(), { remote: 'origin', unpushed: [] });
    assert.equal(pusher.pushes, 1, 'one push');
    assert.equal(await gitOut(remote, ['rev-parse', 'agent-journal']), record);
  } finally {
    pusher.close();
  }
});
