// The background pusher. It gathers appends that come together into one push (pusher.ts GATHER_MS):
// a final answer and the run's record at its end, a batch of reads. Nothing waits for that push, so
// it starts a moment later; the run's end (flush) pushes at once, carrying both. A flush given a
// cap (Ctrl-C's) ends when its timer fires, whatever the wall clock says then.
// The push's failures and retries against real remotes are test/journal/push.test.ts's.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
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

test(
  'a capped flush ends at its cap when the remote never answers, though the wall clock steps back meanwhile',
  { timeout: 30_000 },
  async () => {
    // A remote that takes the connection and never says a word: no push ever fails, so nothing but
    // the cap's own timer can end the flush.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    scratch.defer(() => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), silent.close(resolve))));
    const { port } = silent.address() as { port: number };
    const repo = await scratch.repo();
    await repo.git('remote', 'add', 'origin', `http://127.0.0.1:${port}/journal.git`);
    const store = await JournalStore.open(repo.root);
    const step = await store.append([{ path: 'runs/r/steps/000/000001-model.json', content: '{}\n' }], 'r #1 model turn');
    const pusher = new JournalPusher(() => store, 'origin', 'r', { timeoutMs: 600_000 });
    const wallClock = Date.now;
    try {
      await pusher.afterAppend(step);
      // Timers count on a monotonic clock and Date.now() is the wall clock: the two disagree by a
      // millisecond or two at times, and by much more when the wall clock is set back (here by a
      // minute, as the flush starts). The cap's timer firing is the cap passing, either way.
      Date.now = () => wallClock() + 60_000;
      const flushing = pusher.flush(100);
      Date.now = wallClock;
      const report = await flushing;
      assert.deepEqual(report.unpushed, ['#1']);
      assert.match(report.reason ?? '', /a push was still under way when the run had to end/);
    } finally {
      Date.now = wallClock;
      pusher.close();
    }
  },
);
