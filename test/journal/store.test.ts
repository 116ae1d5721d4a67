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

      // The next append goes through without waiting for any lock to turn stale.
      const started = Date.now();
      await store.append([{ path: 'runs/r/steps/000/000004-a.json', content: '4\n' }], 'r #4');
      assert.ok(Date.now() - started < 900, `the next append took ${Date.now() - started} ms`);
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
    const started = Date.now();
    setTimeout(() => unlinkSync(lockPath(repo)), 300);
    await store.append([{ path: 'b', content: 'b\n' }], 'second');
    assert.ok(Date.now() - started >= 250, `the append waited ${Date.now() - started} ms`);
    assert.deepEqual(await journalSubjects(repo.root), ['second', 'first']);
    await assertFsckClean(repo.root);
  });

  it('while an append waits for the lock, its prepared lock content is invisible to git (no stray branch, no broken ref)', async () => {
    const repo = await newRepo();
    const store = await JournalStore.open(repo.root);
    await store.append([{ path: 'a', content: 'a\n' }], 'first');
    writeFileSync(lockPath(repo), 'held\n');
    const appending = store.append([{ path: 'b', content: 'b\n' }], 'second');
    await sleep(100);
    // A kill -9 right now would leave exactly these files behind.
    const leftovers = readdirSync(join(repo.root, '.git/refs/heads')).filter((name) => !['main', 'agent-journal', 'agent-journal.lock'].includes(name));
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
    const release = sleep(400).then(() => unlinkSync(lockPath(repo)));
    let ageWhenLocked = -1;
    const moved = await compareAndSwapRef(gitdir, ref, undefined, tip, {
      staleMs: 1000,
      faultPoint: (name) => {
        if (name === 'locked') ageWhenLocked = Date.now() - statSync(lockPath(repo)).mtimeMs;
      },
    });
    await release;
    assert.equal(moved, true);
    assert.equal(readRef(gitdir, ref), tip);
    assert.ok(ageWhenLocked >= 0 && ageWhenLocked < 150, `the lock was ${ageWhenLocked} ms old the moment it was taken, after a 400 ms wait`);
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
