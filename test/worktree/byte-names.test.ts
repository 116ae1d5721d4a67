// Names that are not UTF-8 in a big working tree, with git itself as the judge (git add -A into a
// scratch index, git write-tree): the checkpoint is git's own tree on the first pass, on the
// passes where untracked files are stat()ed on two threads, and where they are listed directory
// by directory (a directory whose name is not UTF-8 among them).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { POOL_FROM } from '../../src/worktree/file-hasher.js';
import { UNTRACKED_LISTING_FROM } from '../../src/worktree/untracked-listing.js';
import { useScratch } from '../helpers/scratch.js';
import { gitWorktreeTree, snapshotterFor } from './support.js';

const scratch = useScratch();
// A path under `root` as bytes: `name` with the Latin-1 byte 0xe9 where it says %e9.
const bytes = (root: string, name: string) => Buffer.concat([Buffer.from(`${root}/`), ...name.split('%e9').flatMap((part, i) => (i ? [Buffer.of(0xe9), Buffer.from(part)] : [Buffer.from(part)]))]);

describe('names that are not UTF-8 in a big working tree', () => {
  test("every checkpoint is git's own tree: first pass, stats on two threads, listing by directory", async () => {
    const repo = await scratch.repo({ 'README.md': '# r\n' });
    writeFileSync(bytes(repo.root, 'caf%e9.txt'), 'tracked\n');
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'a Latin-1 name');
    const count = Math.max(POOL_FROM, UNTRACKED_LISTING_FROM) + 200;
    for (const dir of ['a', 'b']) mkdirSync(join(repo.root, dir));
    mkdirSync(bytes(repo.root, 'd%e9j%e9'));
    for (let i = 0; i < count; i++) writeFileSync(join(repo.root, i % 2 ? 'a' : 'b', `f${i}.txt`), `${i}\n`);
    writeFileSync(bytes(repo.root, 'd%e9j%e9/r%e9sum%e9.txt'), 'untracked\n');
    const snapshotter = snapshotterFor(repo.root);
    const check = async (what: string) => assert.equal(snapshotter.snapshot().tree, await gitWorktreeTree(repo.root), what);
    await check('the first checkpoint');
    writeFileSync(bytes(repo.root, 'caf%e9.txt'), 'tracked, edited\n');
    writeFileSync(bytes(repo.root, 'd%e9j%e9/r%e9sum%e9.txt'), 'untracked, edited\n');
    await check('after editing both');
    writeFileSync(join(repo.root, 'a', 'new.txt'), 'new\n'); // another directory changed: the Latin-1 one is not
    await check('after a new file elsewhere');
    writeFileSync(bytes(repo.root, 'd%e9j%e9/n%e9w.txt'), 'new\n');
    await check('after a new file in the Latin-1 directory');
  });
});
