// The journal store on a real repository, judged by the git CLI: appends, injected failures at
// every point of the write path, and the ref lock protocol (stale, live, and freshly taken locks).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { JournalStore, type FaultPoint } from '../../src/journal/store.js';
import { compareAndSwapRef, readRef } from '../../src/git/refs.js';
import { assertFsckClean, commitCount, gitOut, journalFile, journalFiles, journalSubjects, refNames, runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const FAULT_POINTS: FaultPoint[] = ['before-objects', 'after-objects', 'before-lock', 'locked', 'before-rename', 'before-sync', 'after-rename'];

const scratch = useScratch();
const newRepo = (): Promise<TempRepo> => scratch.repo();

// Waits until an append waiting for the held ref lock has prepared its own lock content (a file of
// its own beside the branch), and returns those files: the moment the append is known to be waiting.
async function waitingForLock(repo: TempRepo): Promise<string[]> {
  const prepared = () => readdirSync(join(repo.root, '.git/refs/heads')).filter((name) => !['main', 'agent-journal', 'agent-journal.lock'].includes(name));
  while (prepared().length === 0) await sleep(5);
  return prepared();
}

function lockPath(repo: TempRepo): string {
  return join(repo.root, '.git/refs/heads/agent-journal.lock');
}

describe('JournalStore.append', () => {
  let repo: TempRepo;
  before(async () => {
    repo = await newRepo();
  });

  it('writes one commit per append whose tree holds the files, readable by git', async () => {
    const store = await JournalStore.open(repo.root);
    assert.equal(store.tip, undefined);
    const first = await store.append([{ path: 'runs/a/run.json', content: '{"a":1}\n' }], 'a #1 first');
    const second = await store.append([{ path: 'runs/a/steps/000/000001-x.json', content: 'two\n' }], 'a #2 second');
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), second);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal~1']), first);
    assert.deepEqual(await journalSubjects(repo.root), ['a #2 second', 'a #1 first']);
    assert.deepEqual(await journalFiles(repo.root), ['runs/a/run.json', 'runs/a/steps/000/000001-x.json']);
    assert.equal(await journalFile(repo.root, 'runs/a/steps/000/000001-x.json'), 'two');
    assert.equal((await store.fileAt('runs/a/run.json'))?.toString(), '{"a":1}\n');
    await assertFsckClean(repo.root);
  });

  it('builds on commits another store appended in the meantime instead of overwriting them', async () => {
    const one = await JournalStore.open(repo.root);
    const two = await JournalStore.open(repo.root);
    await one.append([{ path: 'runs/one/run.json', content: 'one\n' }], 'one');
    await two.append([{ path: 'runs/two/run.json', content: 'two\n' }], 'two'); // two's view is stale
    await one.append([{ path: 'runs/one/steps/000/000001-x.json', content: 'x\n' }], 'one again');
    const files = await journalFiles(repo.root, 'runs');
    for (const path of ['runs/a/run.json', 'runs/one/run.json', 'runs/two/run.json', 'runs/one/steps/000/000001-x.json']) {
      assert.ok(files.includes(path), `${path} is on the branch`);
    }
    assert.equal(await commitCount(repo.root), 5);
    await assertFsckClean(repo.root);
  });

  it('never replaces a step file another store recorded: a stale append stops with ESTEPTAKEN and the recorded step stays', async () => {
    const owner = await JournalStore.open(repo.root);
    const stale = await JournalStore.open(repo.root); // its view of the tip is from before the owner's step
    const path = 'runs/fenced/steps/000/000003-run_bash.json';
    await owner.append([{ path, content: 'recorded by the new owner\n' }], 'fenced #3 by the owner');
    await assert.rejects(stale.append([{ path, content: 'written by a paused process\n' }], 'fenced #3 stale'), (error: unknown) => (error as { code?: string }).code === 'ESTEPTAKEN');
    assert.equal(await journalFile(repo.root, path), 'recorded by the new owner');
    // The same content again is no conflict (an append repeated), and other files still land.
    await stale.append([{ path: 'runs/fenced/run.json', content: '{}\n' }], 'fenced run.json');
    await assertFsckClean(repo.root);
  });

  it('asks the owner check before every attempt, also after losing the race, and writes nothing once it throws', async () => {
    const first = await JournalStore.open(repo.root);
    const second = await JournalStore.open(repo.root);
    await first.append([{ path: 'runs/race/run.json', content: 'a\n' }], 'race a');
    let asked = 0;
    const before = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    await assert.rejects(
      second.append([{ path: 'runs/race/steps/000/000001-x.json', content: 'x\n' }], 'race x', () => {
        if (++asked > 1) throw new Error('taken over'); // the first attempt loses the race; the second must not build on the new tip
      }),
      /taken over/,
    );
    assert.equal(asked, 2);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), before, 'nothing was appended');
  });
});

describe('a failure injected at each point of the write path', () => {
  for (const point of FAULT_POINTS) {
    it(`at ${point}: the append fails, the branch keeps every earlier entry, no ref lock is left, and the next append succeeds at once`, async () => {
      const repo = await newRepo();
      let armed: FaultPoint | undefined;
      const store = await JournalStore.open(repo.root, {
        faultPoint: (name) => {
          if (name !== armed) return;
          armed = undefined;
          throw new Error(`injected failure at ${name}`);
        },
      });
      await store.append([{ path: 'runs/r/steps/000/000001-a.json', content: '1\n' }], 'r #1');
      const tip = await store.append([{ path: 'runs/r/steps/000/000002-a.json', content: '2\n' }], 'r #2');

      armed = point;
      await assert.rejects(store.append([{ path: 'runs/r/steps/000/000003-a.json', content: '3\n' }], 'r #3'), {
        message: `injected failure at ${point}`,
      });
      assert.equal(armed, undefined, 'the fault point was reached');

      // The branch is whole: fsck is clean, the earlier entries are there, no lock is left behind.
      await assertFsckClean(repo.root, point);
      assert.equal(existsSync(lockPath(repo)), false, `${lockPath(repo)} is left behind after a failure at ${point}`);
      const files = await journalFiles(repo.root);
      assert.ok(files.includes('runs/r/steps/000/000001-a.json') && files.includes('runs/r/steps/000/000002-a.json'));
      if (point === 'before-sync' || point === 'after-rename') {
        // The ref had already moved: the entry is on the branch even though the call failed.
        assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal~1']), tip);
        assert.ok(files.includes('runs/r/steps/000/000003-a.json'));
      } else {
        assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip);
        assert.ok(!files.includes('runs/r/steps/000/000003-a.json'));
      }
      assert.deepEqual(await refNames(repo.root), ['refs/heads/agent-journal', 'refs/heads/main']);

      // The next append goes through without waiting for any lock to turn stale: there is none (above).
      await store.append([{ path: 'runs/r/steps/000/000004-a.json', content: '4\n' }], 'r #4');
      assert.equal((await journalSubjects(repo.root))[0], 'r #4');
      assert.equal(await commitCount(repo.root), point === 'before-sync' || point === 'after-rename' ? 4 : 3);
      const reopened = await JournalStore.open(repo.root);
      assert.equal((await reopened.fileAt('runs/r/steps/000/000004-a.json'))?.toString(), '4\n');
      assert.equal((await reopened.fileAt('runs/r/steps/000/000001-a.json'))?.toString(), '1\n');
      await assertFsckClean(repo.root, `${point}, after the next append`);
    });
  }
});

describe('the ref lock (refs/heads/agent-journal.lock)', () => {
  it('a lock file left behind by a dead process is broken, and the append succeeds', async () => {
    const repo = await newRepo();
    const store = await JournalStore.open(repo.root);
    await store.append([{ path: 'a', content: 'a\n' }], 'first');
    writeFileSync(lockPath(repo), '0123456789012345678901234567890123456789\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath(repo), old, old);
    // git itself refuses to move the ref while the lock exists.
    const blocked = await runGit(repo.root, ['update-ref', 'refs/heads/agent-journal', 'HEAD']);
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stderr, /agent-journal\.lock/);

    const commit = await store.append([{ path: 'b', content: 'b\n' }], 'second');
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), commit);
    assert.equal(existsSync(lockPath(repo)), false);
    assert.deepEqual(await journalFiles(repo.root), ['a', 'b']);
    await assertFsckClean(repo.root);
  });

  it('a live lock makes the append wait for it, then the append succeeds on the current tip', async () => {
    const repo = await newRepo();
    const store = await JournalStore.open(repo.root);
    await store.append([{ path: 'a', content: 'a\n' }], 'first');
    writeFileSync(lockPath(repo), 'held by another git command\n');
    let released = false;
    const appending = store.append([{ path: 'b', content: 'b\n' }], 'second').then(() => assert.ok(released, 'the append went on before the lock was released'));
    await waitingForLock(repo);
    released = true;
    unlinkSync(lockPath(repo));
    await appending;
    assert.deepEqual(await journalSubjects(repo.root), ['second', 'first']);
    await assertFsckClean(repo.root);
  });

  it('while an append waits for the lock, its prepared lock content is invisible to git (no stray branch, no broken ref)', async () => {
    const repo = await newRepo();
    const store = await JournalStore.open(repo.root);
    await store.append([{ path: 'a', content: 'a\n' }], 'first');
    writeFileSync(lockPath(repo), 'held\n');
    const appending = store.append([{ path: 'b', content: 'b\n' }], 'second');
    // A kill -9 right now would leave exactly these files behind.
    const leftovers = await waitingForLock(repo);
    assert.equal(leftovers.length, 1, `the waiting append has prepared its lock content: ${leftovers.join(', ')}`);
    assert.deepEqual(await refNames(repo.root), ['refs/heads/agent-journal', 'refs/heads/main']);
    assert.equal(await gitOut(repo.root, ['branch', '--list', '--format=%(refname:short)']), 'agent-journal\nmain');
    await assertFsckClean(repo.root);
    unlinkSync(lockPath(repo));
    await appending;
    assert.deepEqual(await refNames(repo.root), ['refs/heads/agent-journal', 'refs/heads/main']);
  });

  it('a lock taken after a long wait looks fresh, so other writers do not break it as stale', async () => {
    const repo = await newRepo();
    const gitdir = join(repo.root, '.git');
    const ref = 'refs/heads/agent-journal';
    const tip = await gitOut(repo.root, ['rev-parse', 'HEAD']);
    writeFileSync(lockPath(repo), 'held\n'); // a live lock, released after 400 ms
    // At the release a marker file is written, then the lock removed: the lock the waiting writer
    // takes is dated no earlier than the marker (one file-system clock, an order, no duration bound).
    const marker = join(repo.root, 'released');
    const release = sleep(400).then(() => {
      writeFileSync(marker, '');
      unlinkSync(lockPath(repo));
    });
    let takenMtime = -1;
    const moved = await compareAndSwapRef(gitdir, ref, undefined, tip, {
      staleMs: 1000,
      faultPoint: (name) => {
        if (name === 'locked') takenMtime = statSync(lockPath(repo)).mtimeMs;
      },
    });
    await release;
    assert.equal(moved, true);
    assert.equal(readRef(gitdir, ref), tip);
    const releasedMtime = statSync(marker).mtimeMs;
    assert.ok(takenMtime >= releasedMtime, `the lock taken after the wait is dated ${takenMtime}, before the release at ${releasedMtime}`);
  });

  it('a compare-and-swap against a tip that moved reports false and leaves the ref alone', async () => {
    const repo = await newRepo();
    const gitdir = join(repo.root, '.git');
    const ref = 'refs/heads/agent-journal';
    const head = await gitOut(repo.root, ['rev-parse', 'HEAD']);
    assert.equal(await compareAndSwapRef(gitdir, ref, undefined, head), true);
    const other = await gitOut(repo.root, ['commit-tree', '-m', 'other', `${head}^{tree}`]);
    assert.equal(await compareAndSwapRef(gitdir, ref, other, other), false);
    assert.equal(readRef(gitdir, ref), head);
    assert.equal(existsSync(lockPath(repo)), false);
    assert.equal(await compareAndSwapRef(gitdir, ref, head, other), true);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), other);
  });
});
