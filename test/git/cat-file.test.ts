// Reading many objects through one `git cat-file --batch` (ObjectStore.readEach): the bodies are
// exactly what the store's own reader gives, from a `git gc`'d pack of deltas and loose files
// alike; what git does not answer (a missing id, another type, no git on PATH) is read the store's
// own way and fails as that fails; an error thrown while handing bodies on stops the reading.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { makeObject } from '../../src/git/git-object.js';
import { GIT_BATCH_FROM } from '../../src/git/cat-file.js';
import { ObjectStore } from '../../src/git/object-store.js';
import { JournalStore } from '../../src/journal/store.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const COUNT = GIT_BATCH_FROM + 50;
const path = (i: number) => `runs/r/steps/${String(Math.floor(i / 100)).padStart(3, '0')}/${String(i).padStart(6, '0')}-note.json`;
// Alike enough that `git gc` stores most as deltas of one another.
const content = (i: number) => `${JSON.stringify({ step: i, text: 'the same long note, again and again '.repeat(30), n: i })}\n`;

// A journal of COUNT entry files in one commit, packed by `git gc`, then one more blob left loose.
async function journal(): Promise<{ root: string; gitdir: string; blobs: string[]; trees: string[] }> {
  const repo = await scratch.repo();
  const store = await JournalStore.open(repo.root);
  await store.append(Array.from({ length: COUNT }, (_, i) => ({ path: path(i), content: content(i) })), 'many notes');
  await gitOut(repo.root, ['gc', '-q', '--prune=now']);
  const gitdir = (await gitOut(repo.root, ['rev-parse', '--absolute-git-dir'])).trim();
  const loose = makeObject('blob', Buffer.from('{"loose":true}\n'));
  new ObjectStore(gitdir).write([loose]);
  const listing = await gitOut(repo.root, ['ls-tree', '-r', '-t', 'agent-journal']);
  const rows = listing.trim().split('\n').map((line) => line.split(/\s+/));
  return {
    root: repo.root,
    gitdir,
    blobs: [...rows.filter((r) => r[1] === 'blob').map((r) => r[2]!), loose.oid],
    trees: rows.filter((r) => r[1] === 'tree').map((r) => r[2]!),
  };
}

async function readAll(store: ObjectStore, oids: string[], type: 'blob' | 'tree', options: { throughGitFrom?: number } = {}): Promise<string[]> {
  const bodies = new Array<string>(oids.length);
  await store.readEach(oids, type, (body, i) => (bodies[i] = body.toString('hex')), options);
  return bodies;
}

describe('reading many objects through git', () => {
  it('gives every body as the store reads it, packed deltas, trees and a loose object alike', async () => {
    const { root, gitdir, blobs, trees } = await journal();
    assert.match(await gitOut(root, ['count-objects', '-v']), /^count: [1-9]/m, 'one object is loose');
    const store = new ObjectStore(gitdir);
    const own = await Promise.all(blobs.map(async (oid) => (await store.read(oid, 'blob')).toString('hex')));
    assert.ok(blobs.length >= GIT_BATCH_FROM);
    assert.deepEqual(await readAll(store, blobs, 'blob'), own);
    const ownTrees = await Promise.all(trees.map(async (oid) => (await store.read(oid, 'tree')).toString('hex')));
    assert.deepEqual(await readAll(store, trees, 'tree', { throughGitFrom: 1 }), ownTrees);
    // And as git itself prints them: the judge, one object at a time.
    const viaGit = await readAll(store, blobs, 'blob');
    for (const i of [0, 1, Math.floor(blobs.length / 2), blobs.length - 1]) {
      assert.equal(Buffer.from(viaGit[i]!, 'hex').toString(), execFileSync('git', ['cat-file', 'blob', blobs[i]!], { cwd: root, encoding: 'utf8' }));
    }
  });

  it('reads what git does not answer the store\'s own way, failing as that fails', async () => {
    const { gitdir, blobs, trees } = await journal();
    const store = new ObjectStore(gitdir);
    const missing = 'f'.repeat(40);
    const ownMissing = await store.read(missing, 'blob').then(() => 'read', (error: Error) => error.message);
    assert.notEqual(ownMissing, 'read');
    await assert.rejects(readAll(store, [...blobs.slice(0, 10), missing, ...blobs.slice(10)], 'blob'), (error: Error) => error.message === ownMissing);
    await assert.rejects(readAll(store, [...blobs, trees[0]!], 'blob'), /is a tree, expected a blob/);
  });

  it('reads everything the store\'s own way when git cannot be run', async () => {
    const { gitdir, blobs } = await journal();
    const store = new ObjectStore(gitdir);
    const own = await Promise.all(blobs.map(async (oid) => (await store.read(oid, 'blob')).toString('hex')));
    const path = process.env.PATH;
    process.env.PATH = scratch.dir('savepoint-no-git-'); // an empty folder: no git on it
    try {
      assert.deepEqual(await readAll(store, blobs, 'blob'), own);
    } finally {
      process.env.PATH = path;
    }
  });

  it('stops at an error thrown while handing a body on, and throws that error', async () => {
    const { gitdir, blobs } = await journal();
    const store = new ObjectStore(gitdir);
    const stop = new Error('a corrupt entry');
    let handed = 0;
    await assert.rejects(
      store.readEach(blobs, 'blob', () => {
        if (++handed === 5) throw stop;
      }),
      (error) => error === stop,
    );
    assert.equal(handed, 5, 'nothing was handed on after the error');
  });
});
