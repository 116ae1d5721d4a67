// Several processes on one journal: appends of different runs at once lose nothing; one run is
// driven by one process at a time, and the lock of a process killed with -9 is taken over.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RunLockedError, openJournal } from '../../src/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { assertFsckClean, gitOut, journalFiles } from '../helpers/git.js';
import { appendInProcess, runAppender, startAppender } from '../helpers/journal-child.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();
const newRepo = (): Promise<TempRepo> => scratch.repo();

describe('appends from several processes at once', () => {
  it('three processes appending 100 steps each to different runs lose no entry', async () => {
    const repo = await newRepo();
    const runs = ['alpha', 'beta', 'gamma'];
    const reports = await Promise.all(runs.map((run) => runAppender({ dir: repo.root, run, steps: 100, intentEvery: 10 })));
    for (const [i, report] of reports.entries()) {
      assert.equal(report.code, 0, `${runs[i]}: ${report.stderr}`);
      assert.equal(report.finished, true);
      assert.equal(report.started.length, 100);
    }
    // Per run: 100 results, 10 intents, 1 finish.
    const log = await gitOut(repo.root, ['log', '--oneline', 'agent-journal']);
    assert.equal(log.split('\n').length, 3 * 111);
    assert.equal(await gitOut(repo.root, ['rev-list', '--count', '--max-parents=0', 'agent-journal']), '1', 'one straight line of history');
    const store = await JournalStore.open(repo.root);
    for (const run of runs) {
      const files = await journalFiles(repo.root, `runs/${run}/steps`);
      assert.equal(files.length, 110, `${run}: 100 results and 10 intents on the branch`);
      const entries = await readRunEntries(store, run);
      assert.deepEqual(
        entries.filter((e) => e.phase === 'result').map((e) => e.step),
        Array.from({ length: 100 }, (_, i) => i + 1),
      );
    }
    await assertFsckClean(repo.root);
  });
});

describe('one process at a time per run', () => {
  it('refuses the run to a second process with RunLockedError naming pid and host, and takes it over after kill -9', async () => {
    const repo = await newRepo();
    const holder = startAppender({ dir: repo.root, run: 'busy', steps: 5, hangAt: 3 }); // steps 1-2, then hangs in step 3 (an intent step)
    await new Promise<void>((resolve) => holder.onLine((line) => line === 'running 3' && resolve()));
    const pid = holder.process.pid!;

    // This test process is a second process.
    await assert.rejects(openJournal({ dir: repo.root, run: 'busy' }), (error: unknown) => {
      assert.ok(error instanceof RunLockedError);
      assert.equal(error.code, 'ERUNLOCKED');
      assert.match(error.message, new RegExp(`pid ${pid} on ${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.equal(error.data.owner.pid, pid);
      return true;
    });
    // And so is another child running the identical command.
    const second = await runAppender({ dir: repo.root, run: 'busy', steps: 5 });
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`^error ERUNLOCKED Run busy is already running \\(pid ${pid} on `));
    // Another run of the same repository is not affected (driven by this process, another one than the holder).
    const other = await appendInProcess({ dir: repo.root, run: 'other', steps: 2 });
    assert.equal(other.finished, true, other.stderr);

    holder.kill();
    const killed = await holder.result;
    assert.equal(killed.signal, 'SIGKILL');

    // The dead process's lock is taken over; its step 3 was in flight.
    const journal = await openJournal({ dir: repo.root, run: 'busy' });
    const inFlight: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const kind = i % 3 === 0 ? 'command' : 'work';
      await journal.step(kind, { i, text: `step ${i} of busy` }, () => ({ i, square: i * i }), {
        intent: i % 3 === 0,
        describe: `${kind} ${i}`,
        onInFlight: (step) => (inFlight.push(step.position), { rerun: true }),
      });
    }
    assert.deepEqual(journal.stats, { replayed: 2, live: 3 });
    assert.deepEqual(inFlight, [3]);
    journal.close();
    await assertFsckClean(repo.root);
  });

  it('a lock whose pid now belongs to another process (pid reused) is taken over', async () => {
    const repo = await newRepo();
    const locks = join(repo.root, '.git/savepoint/locks');
    mkdirSync(locks, { recursive: true });
    // Our own live pid, but a different process start time: the process that wrote it is gone. The
    // same boot and pid namespace as ours, so the pid is what is checked (a fresh lease or not).
    const here = { bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pidNamespace: readlinkSync('/proc/self/ns/pid') };
    const stale = { pid: process.pid, host: hostname(), since: '2020-01-01T00:00:00.000Z', startTime: '1', ...here, token: 'old' };
    writeFileSync(join(locks, 'reused.lock'), `${JSON.stringify(stale)}\n`);
    const journal = await openJournal({ dir: repo.root, run: 'reused' });
    assert.equal(await journal.step('work', {}, () => 'ok'), 'ok');
    journal.close();
  });

  it('a second open of the same run in the same process is refused until the first is closed', async () => {
    const repo = await newRepo();
    const first = await openJournal({ dir: repo.root, run: 'twice' });
    await assert.rejects(openJournal({ dir: repo.root, run: 'twice' }), { code: 'ERUNLOCKED' });
    first.close();
    const second = await openJournal({ dir: repo.root, run: 'twice' });
    second.close();
  });
});
