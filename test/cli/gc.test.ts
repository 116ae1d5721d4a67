// `git gc --prune=now` from outside while a run waits on the model: what savepoint wrote but has
// not committed yet (the start checkpoint during the first model call; the drift snapshot of a
// `--keep-worktree` resume, whose objects the next checkpoint reuses) must survive it. Judged by
// git: fsck --strict of the repository, and a clone of it that fetches the journal and checks it.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertFsckClean, fakeEnv, git, gitOut, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

async function gcNow(root: string): Promise<void> {
  await gitOut(root, ['gc', '--prune=now', '--quiet']);
}

// A clone that fetches agent-journal and checks every object it received.
async function assertClonesClean(root: string): Promise<void> {
  const clone = join(scratch.dir('savepoint-gc-clone-'), 'clone');
  await gitOut(root, ['clone', '--quiet', '--no-local', root, clone]);
  await gitOut(clone, ['fetch', '--quiet', 'origin', 'agent-journal:agent-journal']);
  await assertFsckClean(clone);
}

async function assertNoPendingRefs(root: string): Promise<void> {
  assert.equal(await gitOut(root, ['for-each-ref', 'refs/savepoint/']), '', 'no pending ref is left behind once the run is done');
}

describe('git gc --prune=now during a model call', { concurrency: true }, () => {
  test('the start checkpoint, written before the first model call and committed after it, survives', async () => {
    const turns: ScriptTurn[] = [
      { tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }], delayMs: 2500 },
      { text: 'Done.' },
    ];
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo();
    // Untracked, so its blob is in no commit: only the start checkpoint references it.
    writeFileSync(join(repo.root, 'notes.txt'), 'only in the working tree\n');
    const cli = startCli(['run', '--yes', 'add b'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 1, 'the first model call', { child: cli });
    await gcNow(repo.root);
    const result = await cli.result;
    assert.equal(result.code, 0, result.stderr);
    await assertFsckClean(repo.root);
    await assertClonesClean(repo.root);
    await assertNoPendingRefs(repo.root);
    // The checkpoint holds the untracked file, readable from the journal.
    assert.equal(await gitOut(repo.root, ['show', 'agent-journal:runs/' + (await runId(repo.root)) + '/worktree/notes.txt']), 'only in the working tree');
  });

  test('the drift snapshot of a --keep-worktree resume, whose objects the next checkpoint reuses, survives', async () => {
    const turns: ScriptTurn[] = [
      { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] },
      { tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }] },
      { text: 'Done.' },
    ];
    const hold = new Set([1]);
    const fake = await scratch.fake(turns, hold);
    const repo = await scratch.repo();
    const args = ['run', '--yes', 'two files'];
    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 2, 'the second model call', { child: first });
    first.kill();
    await first.result;
    // Files the journal never saw: the drift snapshot is the only thing that references them.
    // Older than any timestamp granularity, so the snapshotter trusts its hashes of them from then
    // on and the next checkpoint reuses the drift snapshot's blobs and trees without writing them.
    mkdirSync(join(repo.root, 'docs'));
    const past = new Date(Date.now() - 10_000);
    for (const [path, content] of [['docs/extra.txt', 'written by hand while the run was down\n'], ['a.txt', 'a, edited by hand\n']]) {
      writeFileSync(join(repo.root, path!), content!);
      utimesSync(join(repo.root, path!), past, past);
    }
    hold.clear();
    turns[1] = { ...turns[1]!, delayMs: 2500 };
    const resumed = startCli([...args, '--keep-worktree'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => resumed.stdout.includes('--keep-worktree') && fake.requests.length >= 3, 'the live model call of the resume', { child: resumed });
    await gcNow(repo.root);
    const result = await resumed.result;
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    await assertFsckClean(repo.root);
    await assertClonesClean(repo.root);
    await assertNoPendingRefs(repo.root);
    const run = await runId(repo.root);
    assert.equal(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/docs/extra.txt`]), 'written by hand while the run was down');
    // And the identical command replays it all, still clean.
    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await git(repo.root, ['fsck', '--strict', '--no-progress'])).code, 0);
  });
});

async function runId(root: string): Promise<string> {
  return (await gitOut(root, ['ls-tree', '--name-only', 'agent-journal', 'runs/'])).split('\n')[0]!.replace(/^runs\//, '');
}
