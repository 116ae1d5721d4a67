// `--push` when the remote refuses: a bare remote whose pre-receive hook exits 1. The push is
// reported as the push failing (EPUSHFAILED), never as a failed append: the step it followed stays
// recorded, keeps its position, and the run opens again; and the push never blocks the event loop.
import assert from 'node:assert/strict';
import { chmodSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openJournal, type RunJournal } from '../../src/index.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { createJournalPusher } from '../../src/journal/push.js';
import { PushFailedError } from '../../src/errors/index.js';
import { assertFsckClean, gitOut, runGit } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

async function rejectingRemote(): Promise<{ remote: string; hook: string }> {
  const remote = scratch.dir('savepoint-remote-');
  await gitOut(remote, ['init', '-q', '--bare']);
  const hook = join(remote, 'hooks', 'pre-receive');
  // Slow as well as refusing, so a blocked event loop would show.
  writeFileSync(hook, '#!/bin/sh\nsleep 0.4\necho "refused by policy" >&2\nexit 1\n');
  chmodSync(hook, 0o755);
  return { remote, hook };
}

describe('a push hook that fails after the branch moved', () => {
  it('is the push failing: the step stays recorded, its position is kept, and the event loop ran during the push', async () => {
    const repo = await scratch.repo();
    const { remote, hook } = await rejectingRemote();
    await repo.git('remote', 'add', 'origin', remote);
    const open = async (): Promise<RunJournal> => {
      const journal: RunJournal = await openJournal({
        dir: repo.root,
        run: 'pushed',
        task: 'push me',
        store: { afterAppend: createJournalPusher(() => journal.store, 'origin', 'pushed') },
      });
      return journal;
    };
    const journal = await open();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    let ran = 0;
    try {
      await assert.rejects(
        journal.step('work', { n: 1 }, () => (ran++, { n: 1 })),
        (error: unknown) => {
          assert.ok(error instanceof PushFailedError, `a PushFailedError, not ${String(error)}`);
          assert.equal(error.code, 'EPUSHFAILED');
          assert.match(error.message, /pre-receive hook declined|refused by policy/);
          assert.match(error.message, /recorded locally/);
          return true;
        },
      );
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks >= 5, `timers fired while git pushed (${ticks} ticks in a push of over 0.4 s)`);
    // Recorded locally, at position 1; the next step takes position 2, not 1 again.
    assert.deepEqual(
      (await readRunEntries(journal.store, 'pushed')).map((e) => `${e.step} ${e.phase}`),
      ['1 result'],
    );
    await assert.rejects(journal.step('work', { n: 2 }, () => (ran++, { n: 2 })), PushFailedError);
    assert.equal(ran, 2);
    // A fresh open reads both steps: the run is whole.
    journal.close();
    const reopened = await open();
    assert.deepEqual(
      (await readRunEntries(reopened.store, 'pushed')).map((e) => `${e.step} ${e.phase}`),
      ['1 result', '2 result'],
    );
    // Once the remote accepts again, the same run replays and the next push lands.
    unlinkSync(hook);
    assert.deepEqual(await reopened.step('work', { n: 1 }, () => assert.fail('step 1 ran again')), { n: 1 });
    assert.deepEqual(await reopened.step('work', { n: 2 }, () => assert.fail('step 2 ran again')), { n: 2 });
    await reopened.step('work', { n: 3 }, () => ({ n: 3 }));
    reopened.close();
    assert.equal(await gitOut(remote, ['rev-parse', 'agent-journal']), await repo.git('rev-parse', 'agent-journal'));
    await assertFsckClean(repo.root);
    assert.equal((await runGit(remote, ['fsck', '--strict'])).code, 0);
  });
});
