// A fetched journal is input, not trust, end to end: a run is killed, someone with push access
// rewrites its last checkpoint into a tree git's plumbing accepts but git would never check out (a
// `.git/hooks/post-checkout`, a `..` directory, a file beneath a symbolic link), and the real CLI's
// `savepoint resume` is run on a fresh clone (where restore is automatic) and with --restore. Each
// time it must stop with EUNSAFETREE naming the path and write nothing: not into .git/hooks, not
// outside the repository, not into the working tree, not onto the journal.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { forgeLastCheckpoint, hashBlob, mktree, type ForgedEntry, projectAt } from '../helpers/hostile-tree.js';
import { assertOneParagraph, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const TASK = 'write the notes';

interface Killed {
  dir: string;
  root: string;
  run: string;
  script: string;
}

// A repository at <dir>/a and a run in it killed during its second model call (after write_file
// recorded a checkpoint), so the run is unfinished and its last checkpoint is step 2's.
async function killedRun(): Promise<Killed> {
  const { dir, root } = await projectAt(() => scratch.dir('savepoint-hostile-'));
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'slow', delayMs: 60_000 }, { text: 'done' }] }));
  const cli = startCli(['run', '--yes', '--model', `script:${script}`, TASK], { cwd: root });
  await waitUntil(() => /#2 .*write_file notes\.txt/.test(cli.stdout), 'the write_file step', { child: cli });
  cli.kill();
  await cli.result;
  const run = /run (\S+)/.exec(cli.stdout)![1]!;
  return { dir, root, run, script };
}

// The project's own files, so that only the hostile entries differ from a normal checkpoint.
async function withProject(root: string, hostile: ForgedEntry[]): Promise<string> {
  const readme = await hashBlob(root, '# project\n');
  const notes = await hashBlob(root, 'notes\n');
  return mktree(root, [{ mode: '100644', name: 'README.md', oid: readme }, { mode: '100644', name: 'notes.txt', oid: notes }, ...hostile]);
}

// The tree: a hook in .git/hooks and a file one directory above the working tree.
async function hookAndParent(root: string): Promise<string> {
  const hook = await hashBlob(root, '#!/bin/sh\necho pwned > /tmp/savepoint-pwned\n');
  const hooks = await mktree(root, [{ mode: '100755', name: 'post-checkout', oid: hook }]);
  const dotGit = await mktree(root, [{ mode: '040000', name: 'hooks', oid: hooks }]);
  const up = await mktree(root, [{ mode: '100644', name: 'escaped.txt', oid: await hashBlob(root, 'outside\n') }]);
  return withProject(root, [
    { mode: '040000', name: '.git', oid: dotGit },
    { mode: '040000', name: '..', oid: up },
  ]);
}

// A symbolic link `out` to a directory outside, and a file `out/x` (a tree entry of the same name).
async function fileBeneathLink(root: string, outside: string): Promise<string> {
  const link = await hashBlob(root, outside);
  const sub = await mktree(root, [{ mode: '100644', name: 'x', oid: await hashBlob(root, 'through the link\n') }]);
  return withProject(root, [
    { mode: '120000', name: 'out', oid: link },
    { mode: '040000', name: 'out', oid: sub },
  ]);
}

function assertNothingWritten(root: string, dir: string, before: { hooks: string[]; status: string }, status: string): void {
  assert.deepEqual(readdirSync(join(root, '.git', 'hooks')).sort(), before.hooks, 'nothing in .git/hooks');
  assert.ok(!existsSync(join(root, '.git', 'hooks', 'post-checkout')));
  assert.ok(!existsSync(join(dir, 'escaped.txt')), 'nothing outside the repository');
  assert.equal(status, before.status, 'the working tree is as it was');
}

const snapshotOf = async (root: string) => ({ hooks: readdirSync(join(root, '.git', 'hooks')).sort(), status: await gitOut(root, ['status', '--porcelain', '--untracked-files=all']) });

describe('a forged checkpoint is refused as a whole', { concurrency: true }, () => {
  test('.git/hooks and ..: on a fresh clone resume stops with EUNSAFETREE and writes nothing; with --restore on the machine itself refused, nothing written, no commit', async () => {
    const { dir, root, run } = await killedRun();
    const step = await forgeLastCheckpoint(root, run, await hookAndParent(root));
    assert.equal(step, 2);
    const tip = await gitOut(root, ['rev-parse', 'agent-journal']);
    const clone = join(dir, 'b');
    await gitOut(dir, ['clone', '-q', root, clone]);
    const before = await snapshotOf(clone);
    const result = await runCli(['resume', '--yes'], { cwd: clone });
    assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
    const message = assertOneParagraph(result.stderr);
    assert.match(message, /holds "(\.git|\.\.)"/);
    assert.match(message, /nothing was written/);
    assert.doesNotMatch(result.stderr, /unexpected error/);
    assertNothingWritten(clone, dir, before, await snapshotOf(clone).then((s) => s.status));
    assert.ok(!existsSync(join(clone, 'notes.txt')), 'not even the harmless files');

    // The same forged checkpoint on the machine the run was killed on, asked to restore it.
    const beforeHere = await snapshotOf(root);
    const here = await runCli(['resume', '--yes', '--restore'], { cwd: root });
    assert.equal(here.code, 1, `${here.stdout}\n${here.stderr}`);
    const refused = assertOneParagraph(here.stderr);
    assert.match(refused, /The checkpoint [0-9a-f]{40} that savepoint was asked to restore holds "(\.git|\.\.)", which .*git's path rule "(dotgit|dot)"/);
    assertNothingWritten(root, dir, beforeHere, (await snapshotOf(root)).status);
    assert.equal(await gitOut(root, ['rev-parse', 'agent-journal']), tip, 'the journal is left as it was');
  });

  test('a file beneath a symbolic link to a directory outside: refused on a fresh clone and with --restore', async () => {
    const { dir, root, run } = await killedRun();
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    await forgeLastCheckpoint(root, run, await fileBeneathLink(root, outside));
    const clone = join(dir, 'b');
    await gitOut(dir, ['clone', '-q', root, clone]);
    for (const [cwd, args] of [
      [clone, ['resume', '--yes']],
      [root, ['resume', '--yes', '--restore']],
    ] as const) {
      const before = await snapshotOf(cwd);
      const result = await runCli([...args], { cwd });
      assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
      assert.match(assertOneParagraph(result.stderr), /holds "out", which appears twice in the same directory/);
      assert.deepEqual(readdirSync(outside), [], 'nothing written through the link');
      assert.ok(!existsSync(join(cwd, 'out')), 'the link itself is not made either');
      assert.equal((await snapshotOf(cwd)).status, before.status);
    }
  });
});
