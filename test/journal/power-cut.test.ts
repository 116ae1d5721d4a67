// Power cuts, for real: a git repository on a loop-mounted ext4 (and xfs) image; a child process
// appends steps through the real journal (openJournal(...).step(...)) and reports each step that
// returned; then the kernel shuts the file system down without flushing its log (FS_IOC_SHUTDOWN,
// FS_GOING_DOWN_NOLOGFLUSH: whatever the journal did not make durable is gone, as at a power cut),
// and the image is unmounted and mounted again. Every step the child saw return must be on the
// branch, `git fsck --strict` must be clean, and the identical command again must resume and finish.
// Most cuts land while the child waits inside a step, its last append returned: the append's last
// renames (the ref's above all) are what a missing directory fsync loses. One lands mid-append.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkAfterKill, checkReport, range } from '../helpers/crash-checks.js';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { appendInProcess, startAppender, type AppenderReport } from '../helpers/journal-child.js';
import { createLoopFs, loopFsUnavailable, type LoopFs, type LoopFsType } from '../helpers/loop-fs.js';
import { JournalStore } from '../../src/journal/store.js';
import { makeObject, makeTree } from '../../src/git/git-object.js';
import { ObjectStore } from '../../src/git/object-store.js';

// How many steps a run has. A child held at its cut (a step that never returns, or a fault point it
// blocks at) writes nothing after it, so its run only needs room to go on live after the latest of
// those cuts (step 25, append 33): HELD_STEPS. A child cut while it is busy appending keeps going
// until the cut lands, however late this process hears its line: BUSY_STEPS leaves it 20 steps.
const HELD_STEPS = 36;
const BUSY_STEPS = 60;

// A repository on the mounted file system (`name`: one folder for each test, which share the image),
// its first commit made durable before anything is cut.
function makeRepo(fs: LoopFs, name: string): string {
  const root = join(fs.dir, name);
  const git = (...args: string[]) => {
    const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
    assert.equal(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
  };
  spawnSync('mkdir', ['-p', root]);
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Savepoint Test');
  git('config', 'user.email', 'test@savepoint.invalid');
  git('commit', '-q', '--allow-empty', '-m', 'initial');
  spawnSync('sync', ['-f', root]);
  return root;
}

// Runs the appender and cuts the power when it prints `cutAt`; returns its report. With `hangAt`,
// that step's function never returns (a model call that takes a while): nothing else is written,
// so nothing a later write would sync by accident covers what the last append left unsynced.
async function appendUntilCut(fs: LoopFs, root: string, run: string, steps: number, cutAt: string, hangAt?: number, hangAtFault?: string): Promise<AppenderReport> {
  const child = startAppender({ dir: root, run, steps, hangAt, hangAtFault });
  let cut = false;
  child.onLine((line) => {
    if (cut || line !== cutAt) return;
    cut = true;
    fs.cut(); // synchronous; a child still writing fails at its next write
    if (hangAt !== undefined || hangAtFault !== undefined) child.kill();
  });
  // A safety net for an appender that never reaches the cut, generous for a loaded machine (a pass
  // never waits for it: the cut ends the child).
  const timer = setTimeout(() => child.kill(), 120_000);
  const report = await child.result;
  clearTimeout(timer);
  assert.ok(cut, `the power was cut (${run}): ${report.lines.slice(-3).join(' / ')}\n${report.stderr}`);
  return report;
}

// Runs `body` on the shared file system; if it fails with the file system shut down (a cut not yet
// followed by its remount), mounts it again, so the next test finds it usable.
async function onShared(fs: LoopFs, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    try {
      fs.remount();
    } catch {
      // the test's own failure is the one to report
    }
    throw error;
  }
}

for (const type of ['ext4', 'xfs'] as LoopFsType[]) {
  const unavailable = loopFsUnavailable(type);
  describe(`a power cut on ${type}`, { skip: unavailable ? `skipped: ${unavailable}` : false }, () => {
    // One image for the tests of this file system, one after the other (a cut and its remount take
    // the whole file system, the other tests' folders with it; none of them looks at another's).
    let fs: LoopFs;
    before(() => {
      fs = createLoopFs(type);
    });
    after(() => fs?.remove());
    // While the step after the n-th runs (the n-th's append is the last write), and once while the
    // child is busy appending.
    // And in the gap an append leaves between moving the branch and making that move durable: the
    // lock renamed over the ref, the ref directory's fsync not yet done. Whichever state the cut
    // leaves (the branch moved or not), it must name only objects that are there: fsck stays clean.
    const cuts: Array<{ name: string; cutAt: string; hangAt?: number; hangAtFault?: string }> = [
      { name: 'while step 2 runs (step 1 was the first append of the branch)', cutAt: 'running 2', hangAt: 2 },
      { name: 'while step 8 runs', cutAt: 'running 8', hangAt: 8 },
      { name: 'while step 25 runs (step 24 was an intent step)', cutAt: 'running 25', hangAt: 25 },
      { name: 'while appending, as step 40 starts', cutAt: 'running 40' },
      ...[3, 12, 33].map((n) => ({ name: `between the ref's rename and its fsyncs, append ${n}`, cutAt: `fault before-sync ${n}`, hangAtFault: `before-sync:${n}` })),
    ];
    for (const [index, { name, cutAt, hangAt, hangAtFault }] of cuts.entries()) {
      it(`${name}: every step that returned is on the branch, git fsck is clean, and the run resumes`, async () => {
        await onShared(fs, async () => {
          const root = makeRepo(fs, `repo-${index}`);
          const run = 'power';
          const steps = hangAt === undefined && hangAtFault === undefined ? BUSY_STEPS : HELD_STEPS;
          const cutReport = await appendUntilCut(fs, root, run, steps, cutAt, hangAt, hangAtFault);
          assert.notEqual(cutReport.finished, true, 'the run did not finish before the cut');
          assert.deepEqual(cutReport.done, range(1, cutReport.done.length), 'steps returned in order');
          const returned = new Set(cutReport.done);
          assert.ok(returned.size > 0, 'at least one step returned before the cut');

          fs.remount();
          await checkAfterKill(root, run, returned, `after the cut ${name}, ${type}`);

          // The identical command again: replays what returned, goes on live, finishes (in this
          // process: nothing is killed or cut while it runs).
          const resumed = await appendInProcess({ dir: root, run, steps });
          checkReport(resumed, returned, `resuming after the cut ${name}`);
          assert.equal(resumed.finished, true, resumed.stderr);
          for (const step of returned) assert.ok(resumed.replayed.includes(step), `step ${step} replayed, not re-run`);
          await checkAfterKill(root, run, new Set(range(1, steps)), `after resuming, ${type}`);

          // And what resuming wrote survives a second cut, made once it finished.
          fs.cut();
          fs.remount();
          await assertFsckClean(root, `after a second cut, ${type}`);
          assert.match(await gitOut(root, ['log', '-1', '--format=%s', 'agent-journal']), /^power finished/);
        });
      });
    }

    // A checkpoint is stored with the synchronous write() (its directories are fsynced by the
    // append that references it); here this process is the writer, and cuts right after the append.
    // (ext4's and xfs's logs are ordered, so the append's own fsyncs would carry these names too:
    // this guards the outcome, but cannot tell a missing directory fsync of them from a present one.)
    it('a checkpoint stored just before an append survives a cut right after it', async () => {
      await onShared(fs, async () => {
        const root = makeRepo(fs, 'repo-checkpoint');
        for (let round = 1; round <= 3; round++) {
          const store = await JournalStore.open(root);
          const objects = new ObjectStore(store.repo.commonDir);
          const files = new Map(range(1, 20).map((i) => [`f${i}.txt`, makeObject('blob', Buffer.from(`round ${round} file ${i}\n`))]));
          const tree = makeTree(new Map([...files].map(([name, blob]) => [name, { mode: '100644', oid: blob.oid }])));
          objects.write([...files.values(), tree]);
          await store.append([{ path: `runs/cp/worktree/${round}`, tree: tree.oid }], `checkpoint ${round}`);
          fs.cut();
          fs.remount();
          await assertFsckClean(root, `after the cut of round ${round}, ${type}`);
          assert.equal(await gitOut(root, ['rev-parse', `agent-journal:runs/cp/worktree/${round}`]), tree.oid);
          assert.equal(await gitOut(root, ['show', `agent-journal:runs/cp/worktree/${round}/f7.txt`]), `round ${round} file 7`);
        }
      });
    });
  });
}
