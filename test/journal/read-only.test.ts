// A journal whose disk turns read-only in the middle of a run, for real: the repository on a
// tmpfs that is remounted read-only (as the kernel remounts a file system after a disk error)
// while a child appends steps through the real journal. The child must stop with one clear error
// (EJOURNALREADONLY, no stack trace, never "unexpected error"), lose nothing that returned, and
// once the file system is writable again the identical command (in the test's process: nothing is
// killed then) resumes where it stopped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkAfterKill, checkReport, range } from '../helpers/crash-checks.js';
import { createRepoAt } from '../helpers/git.js';
import { appendInProcess, startAppender } from '../helpers/journal-child.js';
import { createSmallTmpfs, tmpfsUnavailable } from '../helpers/loop-fs.js';
import { useScratch } from '../helpers/scratch.js';

const STEPS = 30;
const scratch = useScratch();
const unavailable = tmpfsUnavailable();

// A remount to read-only fails ("mount point is busy") while a file on it is open for writing: an
// append holds its pack's temp files open for a millisecond or two. The kernel's own remount after
// a disk error does not wait; this one tries again (every 2 ms, up to 2 s) until it lands between
// two writes.
function remount(dir: string, mode: 'ro' | 'rw'): void {
  let result = spawnSync('mount', ['-o', `remount,${mode}`, dir], { encoding: 'utf8' });
  for (let tries = 0; result.status !== 0 && /busy/.test(result.stderr) && tries < 1000; tries++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    result = spawnSync('mount', ['-o', `remount,${mode}`, dir], { encoding: 'utf8' });
  }
  assert.equal(result.status, 0, `mount -o remount,${mode}: ${result.stderr}`);
}

describe('a disk that turns read-only mid-run', { skip: unavailable ? `skipped: ${unavailable}` : false }, () => {
  it('stops the run with EJOURNALREADONLY, loses nothing, and resumes once it is writable again', async () => {
    const disk = createSmallTmpfs(32);
    scratch.defer(() => {
      spawnSync('mount', ['-o', 'remount,rw', disk.dir]);
      disk.remove();
    });
    const root = join(disk.dir, 'repo');
    await createRepoAt(root);
    const run = 'readonly';

    // Each step works 50 ms; the disk goes read-only once five steps have returned.
    const appender = startAppender({ dir: root, run, steps: STEPS, workMs: 50 });
    await new Promise<void>((resolve) => appender.onLine((line) => line === 'done 5' && resolve()));
    remount(disk.dir, 'ro');
    const stopped = await appender.result;
    assert.equal(stopped.code, 1, `the child stopped with an error\n${stopped.lines.join('\n')}\n${stopped.stderr}`);
    assert.match(stopped.stderr, /^error EJOURNALREADONLY /m);
    assert.match(stopped.stderr, /its file system is now read-only \(EROFS\)/);
    assert.match(stopped.stderr, /Nothing that was finished is lost/);
    assert.doesNotMatch(stopped.stderr, /unexpected error/);
    assert.doesNotMatch(stopped.stderr, /\n\s+at /, 'no stack trace');
    const returned = new Set(stopped.done);
    assert.ok(returned.size >= 5 && returned.size < STEPS, `stopped mid-run (${returned.size} steps returned)`);
    assert.deepEqual(stopped.done, range(1, stopped.done.length));

    remount(disk.dir, 'rw');
    await checkAfterKill(root, run, returned, 'after the read-only disk');
    const resumed = await appendInProcess({ dir: root, run, steps: STEPS }); // the identical command, in this process
    checkReport(resumed, returned, 'resuming once writable');
    assert.equal(resumed.finished, true, resumed.stderr);
    for (const step of returned) assert.ok(resumed.replayed.includes(step), `step ${step} replayed, not re-run`);
    await checkAfterKill(root, run, new Set(range(1, STEPS)), 'after resuming');
  });
});
