// Comparing checkpoints: diffTrees must name exactly the files `git diff --name-status` names between
// the same two trees (nested changes, a file that became a directory, whole directories added or
// removed, one side empty), and flattenTree must list what `git ls-tree -r` lists.
import assert from 'node:assert/strict';
import { rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { diffTrees, flattenTree } from '../../src/git/tree-diff.js';
import { gitOut } from '../helpers/git.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';
import { lsTree, objectsFor, snapshotterFor } from '../worktree/support.js';

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.remove();
});

const LETTER = { added: 'A', deleted: 'D', modified: 'M' } as const;

// git's own answer, as "A path" lines in path order (file/directory swaps as a D and an A).
async function gitDiff(root: string, a: string, b: string): Promise<string[]> {
  const out = await gitOut(root, ['diff', '--name-status', '--no-renames', '-z', a, b]);
  const fields = out.split('\0').filter(Boolean);
  const lines: string[] = [];
  for (let i = 0; i < fields.length; i += 2) lines.push(`${fields[i]![0]} ${fields[i + 1]}`);
  return lines.sort();
}

describe('diffTrees and flattenTree agree with git', { concurrency: true }, () => {
  test('between two checkpoints of a changing working tree', async () => {
    const repo = await createTempRepo({
      files: { 'a.txt': 'a\n', 'src/x.js': 'x\n', 'src/deep/y.js': 'y\n', 'src/deep/z.js': 'z\n', 'gone/1.txt': '1\n', 'gone/2.txt': '2\n', 'swap': 'file\n' },
      commit: true,
    });
    repos.push(repo);
    const snapshotter = snapshotterFor(repo.root);
    const objects = objectsFor(repo.root);
    const before = snapshotter.snapshot().tree;
    repo.write('src/deep/y.js', 'y changed\n');
    repo.write('src/new/deeper/n.js', 'new\n');
    rmSync(join(repo.root, 'gone'), { recursive: true });
    unlinkSync(join(repo.root, 'swap'));
    repo.write('swap/inside.txt', 'now a directory\n');
    repo.write('b.txt', 'b\n');
    const afterTree = snapshotter.snapshot().tree;

    const ours = (await diffTrees(objects, before, afterTree)).map((c) => `${LETTER[c.change]} ${c.path}`).sort();
    assert.deepEqual(ours, await gitDiff(repo.root, before, afterTree));
    const back = (await diffTrees(objects, afterTree, before)).map((c) => `${LETTER[c.change]} ${c.path}`).sort();
    assert.deepEqual(back, await gitDiff(repo.root, afterTree, before));

    assert.deepEqual(await diffTrees(objects, afterTree, afterTree), [], 'a tree does not differ from itself');
    const fromNothing = await diffTrees(objects, undefined, afterTree);
    assert.ok(fromNothing.every((c) => c.change === 'added'));
    assert.deepEqual(fromNothing.map((c) => c.path).sort(), [...(await lsTree(repo.root, afterTree)).keys()].sort());
    const toNothing = await diffTrees(objects, before, undefined);
    assert.ok(toNothing.every((c) => c.change === 'deleted'));

    const flat = await flattenTree(objects, afterTree);
    assert.deepEqual(new Map([...flat].map(([path, e]) => [path, `${e.mode} ${e.oid}`])), await lsTree(repo.root, afterTree));
  });

  test('a prefix is put in front of every path (diffs of a subtree, as sync names entries)', async () => {
    const repo = await createTempRepo({ files: { 'steps/1.json': '1\n' }, commit: true });
    repos.push(repo);
    const snapshotter = snapshotterFor(repo.root);
    const a = snapshotter.snapshot().tree;
    repo.write('steps/2.json', '2\n');
    const b = snapshotter.snapshot().tree;
    assert.deepEqual(await diffTrees(objectsFor(repo.root), a, b, 'runs/r1/'), [{ path: 'runs/r1/steps/2.json', change: 'added' }]);
  });
});
