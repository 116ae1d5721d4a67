// The journal branch moved under a live run: deleted by an everyday cleanup, reset one commit back,
// or reset onto other history. An append never builds on a tip that lacks what the process last read
// or wrote: it puts the branch back (deleted, or moved back to an ancestor), or stops with
// EJOURNALMOVED, appending nothing. Every move that loses commits is in git's reflog (git logs its
// own; the store logs the put back), so `git reflog` can undo one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { JournalMovedError, openJournal } from '../../src/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { assertFsckClean, gitOut, journalSubjects } from '../helpers/git.js';
import { assertStepModes, fakeEnv, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

async function storeWithThree(): Promise<{ root: string; store: JournalStore }> {
  const repo = await scratch.repo();
  const store = await JournalStore.open(repo.root);
  for (const n of [1, 2, 3]) await store.append([{ path: `runs/r/${n}`, content: `${n}\n` }], `r #${n}`);
  return { root: repo.root, store };
}

describe('an append after the branch moved under it', { concurrency: true }, () => {
  it('puts back a deleted branch (git branch -D), then appends: nothing lost, logged in the reflog', async () => {
    const { root, store } = await storeWithThree();
    const restored: unknown[] = [];
    const watched = await JournalStore.open(root, { onRestored: (event) => restored.push(event) });
    const known = store.tip!;
    await gitOut(root, ['branch', '-D', 'agent-journal']);
    await watched.append([{ path: 'runs/r/4', content: '4\n' }], 'r #4');
    assert.deepEqual(await journalSubjects(root), ['r #4', 'r #3', 'r #2', 'r #1']);
    assert.deepEqual(restored, [{ restored: known, found: undefined }]);
    const reflog = (await gitOut(root, ['reflog', 'show', '--format=%H %gs', 'agent-journal'])).split('\n');
    assert.equal(reflog.length, 2, `git branch -D dropped the old log; ours starts again:\n${reflog.join('\n')}`);
    assert.match(reflog[1]!, new RegExp(`^${known} savepoint: put back at the journal of a live run \\(the branch was deleted under it\\)$`));
    assert.match(reflog[0]!, /^[0-9a-f]{40} savepoint: r #4$/);
    await assertFsckClean(root);
  });

  it('puts back a branch reset one commit back, then appends on the commit it had', async () => {
    const { root, store } = await storeWithThree();
    await gitOut(root, ['update-ref', '-m', 'user reset', 'refs/heads/agent-journal', 'agent-journal~1']);
    await store.append([{ path: 'runs/r/4', content: '4\n' }], 'r #4');
    assert.deepEqual(await journalSubjects(root), ['r #4', 'r #3', 'r #2', 'r #1']);
    await assertFsckClean(root);
  });

  it('stops with EJOURNALMOVED when the branch was reset onto other history, and appends nothing', async () => {
    const { root, store } = await storeWithThree();
    const tree = await gitOut(root, ['mktree'], { input: '' });
    const other = await gitOut(root, ['commit-tree', tree, '-m', 'other history']);
    await gitOut(root, ['update-ref', 'refs/heads/agent-journal', other]);
    await assert.rejects(store.append([{ path: 'runs/r/4', content: '4\n' }], 'r #4'), (error: unknown) => {
      assert.ok(error instanceof JournalMovedError);
      assert.equal(error.code, 'EJOURNALMOVED');
      assert.equal(error.data.found, other);
      assert.match(error.message, /git reflog agent-journal/);
      return true;
    });
    assert.equal(await gitOut(root, ['rev-parse', 'agent-journal']), other, 'the branch is left where the user put it');
  });

  it('keeps reflog lines where they protect something, in git\'s format, with the user\'s identity, that git reads back', async () => {
    // An append's old tip is its commit's first parent, so a line per append recorded nothing the
    // branch does not hold: a store logs the creation, its first append, one in APPENDS_PER_LINE,
    // and every move that is not an append (here: the put back after a reset).
    const { root } = await storeWithThree();
    const subjects = async () => (await gitOut(root, ['reflog', 'show', '--format=%gn <%ge>|%gs', 'agent-journal'])).split('\n');
    assert.deepEqual(await subjects(), ['Savepoint Test <test@savepoint.invalid>|savepoint: r #1']);
    // The first entry is the branch's creation (old id all zeros), as git writes it.
    const log = await gitOut(root, ['rev-parse', '--git-path', 'logs/refs/heads/agent-journal']);
    const first = readFileSync(`${root}/${log}`, 'utf8').split('\n')[0]!;
    assert.match(first, /^0{40} [0-9a-f]{40} Savepoint Test <test@savepoint\.invalid> \d{10} [+-]\d{4}\tsavepoint: r #1$/);

    // Another store (a resume, another process): its first append is logged (one in APPENDS_PER_LINE
    // after it: test/git/reflog.test.ts).
    const next = await JournalStore.open(root);
    for (const n of [4, 5, 6]) await next.append([{ path: `runs/r/${n}`, content: `${n}\n` }], `r #${n}`);
    assert.deepEqual((await subjects()).map((s) => s.split('|')[1]), ['savepoint: r #4', 'savepoint: r #1']);
    // Every value the branch had is still reachable from the tip (the lines left out are its ancestors).
    for (const n of [1, 2, 3, 5]) assert.equal(await gitOut(root, ['log', '-1', '--format=%s', `agent-journal~${6 - n}`]), `r #${n}`);

    // A move that loses commits is recoverable: a user's reset git logs itself; the store putting the
    // branch back (a non-fast-forward move it makes) is logged, and so is the append after it.
    const tip = await gitOut(root, ['rev-parse', 'agent-journal']);
    await gitOut(root, ['update-ref', '-m', 'user reset', 'refs/heads/agent-journal', 'agent-journal~2']);
    assert.equal(await gitOut(root, ['rev-parse', 'agent-journal@{1}']), tip, 'git logged its own move');
    await next.append([{ path: 'runs/r/back', content: 'back\n' }], 'r #back');
    const after = (await subjects()).map((s) => s.split('|')[1]);
    assert.deepEqual(after.slice(0, 3), ['savepoint: r #back', 'savepoint: put back at the journal of a live run (the branch was moved back under it)', 'user reset']);
    assert.equal(await gitOut(root, ['rev-parse', 'agent-journal@{1}']), tip);
    await gitOut(root, ['update-ref', 'refs/heads/agent-journal', 'agent-journal@{3}']); // back before the put back: git's reset
    assert.equal(await gitOut(root, ['rev-parse', 'agent-journal']), tip);
    await assertFsckClean(root);
  });

  it('a library run whose branch was deleted mid-run opens again whole', async () => {
    const repo = await scratch.repo();
    const journal = await openJournal({ dir: repo.root, run: 'lib', task: 't' });
    await journal.step('work', { n: 1 }, () => 1);
    await journal.step('work', { n: 2 }, async () => {
      await gitOut(repo.root, ['branch', '-D', 'agent-journal']);
      return 2;
    });
    await journal.step('work', { n: 3 }, () => 3);
    journal.close();
    const again = await openJournal({ dir: repo.root, run: 'lib' });
    assert.deepEqual((await readRunEntries(again.store, 'lib')).map((e) => e.step), [1, 2, 3]);
    again.close();
  });
});

describe('the real CLI, when the branch moves during the run', { concurrency: true }, () => {
  it("survives the agent's own `git branch | grep -v main | xargs git branch -D`, and the identical command replays it all", async () => {
    const fake = await scratch.fake([
      { tools: [{ name: 'run_bash', input: { command: 'git branch | grep -v main | xargs git branch -D' } }] },
      { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] },
      { text: 'Cleaned up.' },
    ]);
    const repo = await scratch.repo();
    // Unconfined: in the sandbox .git is read-only and the command cannot delete the branch at all.
    const first = await runCli(['run', '--yes', '--no-sandbox', 'clean up branches'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Deleted branch agent-journal/);
    assert.match(first.stdout, /agent-journal was deleted during the run: put it back at [0-9a-f]{12}/);
    const again = await runCli(['run', '--yes', '--no-sandbox', 'clean up branches'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 5);
    assert.equal(fake.requests.length, 3, 'the replay asked the model nothing');
    await assertFsckClean(repo.root);
  });

  it('survives the user resetting agent-journal one commit back during a model call', async () => {
    const fake = await scratch.fake([
      { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] },
      { tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }], delayMs: 1500 },
      { text: 'Done.' },
    ]);
    const repo = await scratch.repo();
    const cli = startCli(['run', '--yes', 'two files'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 2, 'the second model call', { child: cli });
    await gitOut(repo.root, ['update-ref', 'refs/heads/agent-journal', 'agent-journal~1']);
    const first = await cli.result;
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /agent-journal was moved back during the run: put it back/);
    const again = await runCli(['run', '--yes', 'two files'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 5);
    assert.equal(fake.requests.length, 3);
    await assertFsckClean(repo.root);
  });
});
