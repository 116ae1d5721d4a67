// A ref moved into a directory that did not exist (a first `refs/savepoint/pending/<run>`, with
// refs/savepoint made for it too) is durable only once each new directory's name is durable in
// its parent: compareAndSwapRef (src/git/refs.ts) returns only after every parent that gained a
// directory was fsynced, as well as the ref's own directory. The fsyncs are seen at node:fs,
// patched before the library is loaded (its named imports and its promisify(fsync) see the patch),
// on a real repository. A power cut on a loop-mounted ext4 or xfs cannot show this: their logs are
// ordered, so the ref directory's fsync carries the earlier mkdirs with it (see
// test/journal/power-cut.test.ts), and ext4 without a journal fsyncs a new inode's parents itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';

// What the library did to the file system while `recording` holds: each directory it opened and
// fsynced, each rename, in order, as paths relative to `recording.root`.
let recording: { root: string; events: string[] } | undefined;
const opened = new Map<number, string>();
const patched = fs as unknown as Record<string, (...args: unknown[]) => unknown>;
const real = { openSync: fs.openSync, closeSync: fs.closeSync, fsync: fs.fsync, fsyncSync: fs.fsyncSync, renameSync: fs.renameSync };
const name = (path: unknown) => (recording ? relative(recording.root, String(path)) || '.' : '');
patched.openSync = (...args: unknown[]) => {
  const fd = (real.openSync as (...a: unknown[]) => number)(...args);
  if (recording && (args[1] === 'r' || args[1] === undefined)) opened.set(fd, name(args[0]));
  return fd;
};
patched.closeSync = (fd: unknown) => {
  opened.delete(fd as number);
  return real.closeSync(fd as number);
};
patched.fsyncSync = (fd: unknown) => {
  real.fsyncSync(fd as number);
  if (recording && opened.has(fd as number)) recording.events.push(`fsync ${opened.get(fd as number)}`);
};
patched.fsync = (fd: unknown, callback: unknown) =>
  real.fsync(fd as number, (error) => {
    if (!error && recording && opened.has(fd as number)) recording.events.push(`fsync ${opened.get(fd as number)}`);
    (callback as (error: NodeJS.ErrnoException | null) => void)(error);
  });
patched.renameSync = (from: unknown, to: unknown) => {
  real.renameSync(from as string, to as string);
  if (recording) recording.events.push(`rename ${name(to)}`);
};
syncBuiltinESMExports();
const { compareAndSwapRef, readRef } = await import('../../src/git/refs.js');

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// A repository with one commit; its git directory and that commit.
function repository(): { gitdir: string; oid: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'savepoint-refs-')));
  dirs.push(root);
  const git = (...args: string[]) => {
    const result = spawnSync('git', ['-c', 'user.name=Savepoint Test', '-c', 'user.email=test@savepoint.invalid', ...args], { cwd: root, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout.trim();
  };
  git('init', '-q');
  git('commit', '-q', '--allow-empty', '-m', 'first');
  return { gitdir: join(root, '.git'), oid: git('rev-parse', 'HEAD') };
}

// Moves `ref` to `oid` (a new ref), recording what it fsynced and renamed until it returned.
async function recorded(gitdir: string, ref: string, oid: string): Promise<string[]> {
  recording = { root: gitdir, events: [] };
  try {
    assert.equal(await compareAndSwapRef(gitdir, ref, undefined, oid), true);
    return recording.events;
  } finally {
    recording = undefined;
  }
}

describe('a ref moved into a directory it made', () => {
  it('returns only once each new directory is fsynced into its parent, and the ref into its directory', async () => {
    const { gitdir, oid } = repository();
    assert.equal(existsSync(join(gitdir, 'refs/savepoint')), false);
    const events = await recorded(gitdir, 'refs/savepoint/pending/run-1', oid);
    assert.equal(readRef(gitdir, 'refs/savepoint/pending/run-1'), oid);
    // refs gained savepoint, refs/savepoint gained pending: both fsynced before the move returned.
    assert.ok(events.includes('fsync refs'), `refs/savepoint's name in refs is fsynced: ${events.join(', ')}`);
    assert.ok(events.includes('fsync refs/savepoint'), `refs/savepoint/pending's name in refs/savepoint is fsynced: ${events.join(', ')}`);
    // And the ref's own name in its directory, after the rename that made it.
    const renamed = events.indexOf('rename refs/savepoint/pending/run-1');
    assert.notEqual(renamed, -1, events.join(', '));
    assert.ok(events.slice(renamed).includes('fsync refs/savepoint/pending'), `the ref's directory is fsynced after the rename: ${events.join(', ')}`);
  });

  it('fsyncs no parent when the directory was there (another run\'s pending ref)', async () => {
    const { gitdir, oid } = repository();
    await recorded(gitdir, 'refs/savepoint/pending/run-1', oid);
    const events = await recorded(gitdir, 'refs/savepoint/pending/run-2', oid);
    assert.deepEqual(events, ['rename refs/savepoint/pending/run-2', 'fsync refs/savepoint/pending']);
  });
});
