// A full disk, for real: the repository on a small tmpfs, filled up but for a few KB; the test
// appends steps through the real journal (openJournal(...).step(...), in this process: nothing is
// killed, so no process boundary is needed) until the disk is full. It must stop with one clear
// DiskFullError (EDISKFULL) saying the disk is full and nothing finished is lost, leave git clean
// and no temp file behind; once space is freed, the identical command resumes where it stopped
// (the steps that returned are replayed, not re-run), and the result fscks and clones cleanly.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkAfterKill, checkReport, range } from '../helpers/crash-checks.js';
import { assertFsckClean, createRepoAt, gitOut } from '../helpers/git.js';
import { appendInProcess } from '../helpers/journal-child.js';
import { createSmallTmpfs, tmpfsUnavailable } from '../helpers/loop-fs.js';
import { useScratch } from '../helpers/scratch.js';

const STEPS = 40;
const scratch = useScratch();
const unavailable = tmpfsUnavailable();

describe('a full disk', { skip: unavailable ? `skipped: ${unavailable}` : false }, () => {
  for (const leaveKb of [0, 24, 96]) {
    it(`with ${leaveKb} KB left: the run stops with EDISKFULL, loses nothing, and resumes once space is freed`, async () => {
      const disk = createSmallTmpfs(8);
      scratch.defer(() => disk.remove());
      const root = join(disk.dir, 'repo');
      await createRepoAt(root);
      const run = 'full';

      const filler = disk.fill(leaveKb);
      const stopped = await appendInProcess({ dir: root, run, steps: STEPS });
      assert.equal(stopped.code, 1, `the run stopped with an error\n${stopped.lines.join('\n')}\n${stopped.stderr}`);
      assert.match(stopped.stderr, /^error EDISKFULL /m);
      assert.match(stopped.stderr, /the disk is full \(ENOSPC\)/);
      assert.match(stopped.stderr, /Nothing that was finished is lost/);
      assert.match(stopped.stderr, /run the same command again/);
      assert.doesNotMatch(stopped.stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(stopped.done, range(1, stopped.done.length));
      const returned = new Set(stopped.done);
      if (leaveKb >= 96) assert.ok(returned.size > 0 && returned.size < STEPS, `the disk filled mid-run (${returned.size} steps returned)`);
      if (returned.size) await checkAfterKill(root, run, returned, `disk full with ${leaveKb} KB left`);
      else await assertFsckClean(root, 'disk full before the first step');
      assert.match(await gitOut(root, ['count-objects', '-v']), /^garbage: 0$/m, 'no temp file left in objects/');

      // Free the space and run the identical command again.
      rmSync(filler);
      const resumed = await appendInProcess({ dir: root, run, steps: STEPS });
      checkReport(resumed, returned, `resuming after the full disk (${leaveKb} KB)`);
      assert.equal(resumed.finished, true, resumed.stderr);
      for (const step of returned) assert.ok(resumed.replayed.includes(step), `step ${step} replayed, not re-run`);
      await checkAfterKill(root, run, new Set(range(1, STEPS)), 'after resuming');
      assert.match(await gitOut(root, ['count-objects', '-v']), /^garbage: 0$/m);
      const clone = scratch.dir('savepoint-full-clone-');
      await gitOut(clone, ['clone', '-q', '--no-checkout', root, 'copy']);
      await gitOut(join(clone, 'copy'), ['fetch', '-q', 'origin', 'agent-journal:agent-journal']);
      await assertFsckClean(join(clone, 'copy'), 'the clone');
      assert.equal(await gitOut(join(clone, 'copy'), ['rev-parse', 'agent-journal']), await gitOut(root, ['rev-parse', 'agent-journal']));
    });
  }
});
