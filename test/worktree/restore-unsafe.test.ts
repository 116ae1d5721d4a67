// Restoring a checkpoint that is input, not trust: trees forged with git's own plumbing are refused
// as a whole (UnsafeCheckpointError, nothing written, not even the harmless files listed first),
// and on the working-tree side nothing is written through a symbolic link or over a file git does
// not track (RestoreConflictError, nothing written).
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isSavepointError } from '../../src/errors/index.js';
import { restoreWorktree } from '../../src/worktree/restore.js';
import { createRevealer } from '../../src/redact/reveal.js';
import { hashBlob, literalTree, mktree, type ForgedEntry } from '../helpers/hostile-tree.js';
import { useScratch } from '../helpers/scratch.js';
import { snapshotterFor } from './support.js';

const scratch = useScratch();

async function restoring(root: string, tree: string) {
  const snapshotter = snapshotterFor(root);
  return restoreWorktree(root, snapshotter.objects, tree, snapshotter.snapshot(), snapshotter.trackedPaths());
}

async function assertRefused(root: string, tree: string, code: string, pattern: RegExp): Promise<void> {
  const before = readdirSync(root).sort();
  await assert.rejects(restoring(root, tree), (error: unknown) => {
    assert.ok(isSavepointError(error), String(error));
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  });
  assert.deepEqual(readdirSync(root).sort(), before, 'nothing written into the working tree');
}

describe('restoring a checkpoint git would refuse', { concurrency: true }, () => {
  test('each broken rule is refused with its path and rule, before the first (harmless) file is written', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const blob = await hashBlob(repo.root, 'x\n');
    const sub = await mktree(repo.root, [{ mode: '100644', name: 'f', oid: blob }]);
    // 'aaa.txt' sorts first, so a restore that wrote as it read would write it before the bad entry.
    const harmless: ForgedEntry = { mode: '100644', name: 'aaa.txt', oid: blob };
    const cases: Array<[ForgedEntry[], RegExp]> = [
      [[{ mode: '040000', name: '.git', oid: sub }], /holds "\.git", .*rule "dotgit"/],
      [[{ mode: '040000', name: '.GIT. .', oid: sub }], /holds "\.GIT\. \.", .*rule "dotgit"/],
      [[{ mode: '040000', name: 'GIT~1', oid: sub }], /rule "dotgit"/],
      [[{ mode: '100644', name: '.g\u200cit', oid: blob }], /rule "dotgit"/],
      [[{ mode: '040000', name: 'deep', oid: await mktree(repo.root, [{ mode: '040000', name: '.Git', oid: sub }]) }], /holds "deep\/\.Git"/],
      [[{ mode: '040000', name: '..', oid: sub }], /holds "\.\.", which has a "\.\." component.*rule "dot"/],
      [[{ mode: '040000', name: 'new\nline', oid: await mktree(repo.root, [{ mode: '040000', name: '.git', oid: sub }]) }], /holds "new\\x0aline\/\.git"/],
      [[{ mode: '040000', name: '.', oid: sub }], /rule "dot"/],
      [[{ mode: '100644', name: '..\\x', oid: blob }], /rule "backslash"/],
      [[{ mode: '120000', name: '.gitmodules', oid: blob }], /rule "gitmodules-link"/],
      [[{ mode: '100664', name: 'b', oid: blob }], /has mode "100664".*rule "mode"/],
      [[{ mode: '120000', name: 'link', oid: await hashBlob(repo.root, '/tmp') }, { mode: '040000', name: 'link', oid: sub }], /holds "link", which appears twice.*rule "duplicate"/],
    ];
    for (const [entries, pattern] of cases) {
      const tree = await mktree(repo.root, [harmless, ...entries]);
      await assertRefused(repo.root, tree, 'EUNSAFETREE', pattern);
      assert.ok(!existsSync(join(repo.root, 'aaa.txt')), `${pattern}: not even the harmless file`);
    }
  });

  test('names git mktree refuses, built byte by byte: a slash inside a name, an empty name, not UTF-8', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const blob = await hashBlob(repo.root, 'x\n');
    await assertRefused(repo.root, await literalTree(repo.root, [{ mode: '100644', name: '../escaped', oid: blob }]), 'EUNSAFETREE', /rule "slash"/);
    await assertRefused(repo.root, await literalTree(repo.root, [{ mode: '100644', name: '', oid: blob }]), 'EUNSAFETREE', /rule "empty"/);
    await assertRefused(repo.root, await literalTree(repo.root, [{ mode: '100644', name: '/etc/passwd', oid: blob }]), 'EUNSAFETREE', /rule "slash"/);
  });

  test('a blob that is missing or not a blob, or a link with an empty target: refused, nothing written', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const blob = await hashBlob(repo.root, 'x\n');
    const sub = await mktree(repo.root, [{ mode: '100644', name: 'f', oid: blob }]);
    const harmless: ForgedEntry = { mode: '100644', name: 'aaa.txt', oid: blob };
    await assertRefused(repo.root, await mktree(repo.root, [harmless, { mode: '100644', name: 'gone', oid: 'b'.repeat(40) }]), 'EUNSAFETREE', /holds "gone", .*rule "object"/);
    await assertRefused(repo.root, await literalTree(repo.root, [harmless, { mode: '100644', name: 'tree-as-file', oid: sub }]), 'EUNSAFETREE', /rule "object"/);
    await assertRefused(repo.root, await mktree(repo.root, [harmless, { mode: '120000', name: 'l', oid: await hashBlob(repo.root, '') }]), 'EUNSAFETREE', /rule "symlink-target"/);
  });

  test('a symbolic link in the working tree where the checkpoint has a directory: not followed, refused', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const outside = scratch.dir('savepoint-outside-');
    symlinkSync(outside, join(repo.root, 'out'));
    const blob = await hashBlob(repo.root, 'x\n');
    const tree = await mktree(repo.root, [
      { mode: '100644', name: 'README.md', oid: await hashBlob(repo.root, '# p\n') },
      { mode: '040000', name: 'out', oid: await mktree(repo.root, [{ mode: '100644', name: 'x', oid: blob }]) },
    ]);
    await assertRefused(repo.root, tree, 'ERESTORECONFLICT', /needs to write "out\/x", but "out" is in the way/);
    assert.deepEqual(readdirSync(outside), [], 'nothing written through the link');
    assert.ok(lstatSync(join(repo.root, 'out')).isSymbolicLink(), "the user's link is kept");
  });

  test('an untracked file where the checkpoint has a directory, or in a directory where it has a file: refused', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    repo.write('mine', 'the user made this\n');
    repo.write('dir/keep.txt', 'also the user\n');
    const blob = await hashBlob(repo.root, 'x\n');
    const readme: ForgedEntry = { mode: '100644', name: 'README.md', oid: await hashBlob(repo.root, '# p\n') };
    const asDir = await mktree(repo.root, [readme, { mode: '040000', name: 'mine', oid: await mktree(repo.root, [{ mode: '100644', name: 'x', oid: blob }]) }]);
    await assertRefused(repo.root, asDir, 'ERESTORECONFLICT', /"mine" is in the way/);
    assert.equal(repo.read('mine'), 'the user made this\n');
    const asFile = await mktree(repo.root, [readme, { mode: '100644', name: 'dir', oid: blob }]);
    await assertRefused(repo.root, asFile, 'ERESTORECONFLICT', /"dir\/keep\.txt" is in the way/);
    assert.equal(repo.read('dir/keep.txt'), 'also the user\n');
  });

  test('a tracked file where the checkpoint has a directory, and a tracked directory where it has a file: replaced', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n', 'thing': 'was a file\n', 'folder/a.txt': 'a\n' });
    const blob = await hashBlob(repo.root, 'x\n');
    const tree = await mktree(repo.root, [
      { mode: '100644', name: 'README.md', oid: await hashBlob(repo.root, '# p\n') },
      { mode: '040000', name: 'thing', oid: await mktree(repo.root, [{ mode: '100644', name: 'inside.txt', oid: blob }]) },
      { mode: '100644', name: 'folder', oid: blob },
    ]);
    const result = await restoring(repo.root, tree);
    assert.deepEqual(result.written.sort(), ['folder', 'thing/inside.txt']);
    assert.deepEqual(result.deleted.sort(), ['folder/a.txt', 'thing']);
    assert.equal(repo.read('thing/inside.txt'), 'x\n');
    assert.equal(repo.read('folder'), 'x\n');
  });

  test('a checkpoint with a submodule entry leaves the submodule directory alone', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    mkdirSync(join(repo.root, 'vendor'));
    const tree = await mktree(repo.root, [
      { mode: '100644', name: 'README.md', oid: await hashBlob(repo.root, '# p\n') },
      { mode: '160000', name: 'vendor', oid: 'c'.repeat(40) },
    ]);
    const result = await restoring(repo.root, tree);
    assert.deepEqual(result.written, []);
    assert.deepEqual(readdirSync(join(repo.root, 'vendor')), []);
  });

  test('a recorded name that reveals to a way out, to .git, or to a name another file has: not written, named', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const blob = await hashBlob(repo.root, 'x\n');
    // A fetched journal can tag any name; the values behind its placeholders are this machine's.
    const reveal = createRevealer({ ESCAPE_TOKEN: '../../outside', GITDIR_TOKEN: '.git....', SAME_TOKEN: 'plain.txt' }).partial;
    const tree = await mktree(repo.root, [
      { mode: '100644', name: '[REDACTED:ESCAPE_TOKEN]~0000aaaa', oid: blob },
      { mode: '100644', name: '[REDACTED:GITDIR_TOKEN]~0000bbbb', oid: blob },
      { mode: '100644', name: '[REDACTED:SAME_TOKEN]~0000cccc', oid: blob },
      { mode: '100644', name: 'plain.txt', oid: blob },
      { mode: '100644', name: '[REDACTED:NOBODY_KNOWS]~0000dddd', oid: blob },
    ]);
    const snapshotter = snapshotterFor(repo.root);
    const result = await restoreWorktree(repo.root, snapshotter.objects, tree, snapshotter.snapshot(), snapshotter.trackedPaths(), undefined, reveal);
    assert.deepEqual(result.written, ['plain.txt']);
    assert.deepEqual(result.unrestorable.sort(), ['[REDACTED:ESCAPE_TOKEN]~0000aaaa', '[REDACTED:GITDIR_TOKEN]~0000bbbb', '[REDACTED:NOBODY_KNOWS]~0000dddd', '[REDACTED:SAME_TOKEN]~0000cccc']);
    assert.deepEqual(result.kept, ['README.md'], 'README.md (tracked, not in the checkpoint) may be an unnamed one: kept, not deleted');
    assert.deepEqual(result.deleted, []);
    assert.ok(existsSync(join(repo.root, 'README.md')));
    assert.ok(!existsSync(join(repo.root, '..', 'outside')) && !existsSync(join(repo.root, '../../outside')));
    assert.deepEqual(readdirSync(join(repo.root, '.git')).includes('x'), false);
  });
});
