// `--push` when the remote refuses: a bare remote whose pre-receive hook exits 1. Pushes run in the
// background, so the step returns; the refusal is final (no retry changes a policy), reported by the
// flush and by the next append as the push failing (EPUSHFAILED), never as a failed append: the
// steps stay recorded, keep their positions, and the run opens again; the push never blocks the event loop.
import assert from 'node:assert/strict';
import { chmodSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openJournal, type RunJournal } from '../../src/index.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { JournalPusher } from '../../src/journal/pusher.js';
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

describe('a remote whose pre-receive hook refuses', () => {
  it('is the push failing: the steps stay recorded, their positions are kept, and the event loop ran during the push', async () => {
    const repo = await scratch.repo();
    const { remote, hook } = await rejectingRemote();
    await repo.git('remote', 'add', 'origin', remote);
    const open = async (): Promise<{ journal: RunJournal; pusher: JournalPusher }> => {
      const pusher: JournalPusher = new JournalPusher(() => journal.store, 'origin', 'pushed');
      const journal: RunJournal = await openJournal({ dir: repo.root, run: 'pushed', task: 'push me', store: { afterAppend: pusher.afterAppend, beforeFence: pusher.settle } });
      return { journal, pusher };
    };
    const { journal, pusher } = await open();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    let ran = 0;
    let report;
    try {
      assert.deepEqual(await journal.step('work', { n: 1 }, () => (ran++, { n: 1 })), { n: 1 }, 'the step does not wait for its push');
      report = await pusher.flush();
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks >= 5, `timers fired while git pushed (${ticks} ticks in a push of over 0.4 s)`);
    assert.ok(report.unpushed.includes('#1'), `step 1 is named as not pushed: ${report.unpushed.join(', ')}`);
    assert.match(report.reason ?? '', /refused the push for good \(EPUSHFAILED\)/);
    assert.ok(report.error instanceof PushFailedError);
    assert.match(report.error.message, /pre-receive hook declined|refused by policy/);
    // The refusal is final: the next append says so, after recording its step at position 2.
    await assert.rejects(journal.step('work', { n: 2 }, () => (ran++, { n: 2 })), (error: unknown) => {
      assert.ok(error instanceof PushFailedError, `a PushFailedError, not ${String(error)}`);
      assert.equal(error.code, 'EPUSHFAILED');
      assert.match(error.message, /pre-receive hook declined|refused by policy/);
      assert.match(error.message, /recorded locally/);
      return true;
    });
    assert.equal(ran, 2);
    pusher.close();
    journal.close();
    // A fresh open reads both steps: the run is whole.
    const again = await open();
    assert.deepEqual(
      (await readRunEntries(again.journal.store, 'pushed')).map((e) => `${e.step} ${e.phase}`),
      ['1 result', '2 result'],
    );
    // Once the remote accepts again, the same run replays and the next push lands.
    unlinkSync(hook);
    assert.deepEqual(await again.journal.step('work', { n: 1 }, () => assert.fail('step 1 ran again')), { n: 1 });
    assert.deepEqual(await again.journal.step('work', { n: 2 }, () => assert.fail('step 2 ran again')), { n: 2 });
    await again.journal.step('work', { n: 3 }, () => ({ n: 3 }));
    assert.deepEqual((await again.pusher.flush()).unpushed, []);
    again.pusher.close();
    again.journal.close();
    assert.equal(await gitOut(remote, ['rev-parse', 'agent-journal']), await repo.git('rev-parse', 'agent-journal'));
    await assertFsckClean(repo.root);
    assert.equal((await runGit(remote, ['fsck', '--strict'])).code, 0);
  });

  it('a fenced step waits for its intent to be pushed before it runs, and runs nothing when it cannot be', async () => {
    const repo = await scratch.repo();
    const { remote, hook } = await rejectingRemote();
    await repo.git('remote', 'add', 'origin', remote);
    const pusher: JournalPusher = new JournalPusher(() => journal.store, 'origin', 'fenced');
    const journal: RunJournal = await openJournal({ dir: repo.root, run: 'fenced', task: 'fence me', store: { afterAppend: pusher.afterAppend, beforeFence: pusher.settle } });
    await journal.step('work', { n: 1 }, () => ({ n: 1 }));
    let ran = 0;
    await assert.rejects(journal.step('send', { n: 2 }, () => (ran++, 'sent'), { fence: true }), PushFailedError);
    assert.equal(ran, 0, 'the one-shot effect did not run');
    assert.deepEqual((await readRunEntries(journal.store, 'fenced')).map((e) => `${e.step} ${e.phase}`), ['1 result'], 'not even its intent was written');
    pusher.close();
    journal.close();
    unlinkSync(hook);
    const pusher2: JournalPusher = new JournalPusher(() => journal2.store, 'origin', 'fenced');
    const journal2: RunJournal = await openJournal({ dir: repo.root, run: 'fenced', task: 'fence me', store: { afterAppend: pusher2.afterAppend, beforeFence: pusher2.settle } });
    await journal2.step('work', { n: 1 }, () => assert.fail('step 1 ran again'));
    const seen: string[] = [];
    assert.equal(
      await journal2.step('send', { n: 2 }, async () => {
        // The remote has the intent before the effect runs.
        seen.push(...(await gitOut(remote, ['ls-tree', '-r', '--name-only', 'agent-journal', 'runs/fenced/steps/'])).split('\n'));
        return 'sent';
      }, { fence: true }),
      'sent',
    );
    assert.ok(seen.some((path) => path.endsWith('000002-send.intent.json')), `the intent was on the remote when the effect ran: ${seen.join(', ')}`);
    await pusher2.flush();
    pusher2.close();
    journal2.close();
  });
});
