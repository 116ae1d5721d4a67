// The branch's trees as both stores build them: files grouped by directory, the trees on their
// paths rebuilt on the old root with untouched subtrees reused, objects git itself names alike, and
// a step file never replaced by other content.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { StepAlreadyRecordedError } from '../../src/errors/index.js';
import type { GitObject, Tree } from '../../src/git/git-object.js';
import { buildTrees, fileAtPath, treeAtPath, type TreeSource } from '../../src/journal/branch-trees.js';

const trees = new Map<string, Tree>();
const source: TreeSource = {
  tree: async (oid) => trees.get(oid) ?? assert.fail(`no tree ${oid}`),
  made: (oid, entries) => void trees.set(oid, entries),
};
const build = (root: string | undefined, files: Record<string, string>) => {
  const out: GitObject[] = [];
  return buildTrees(source, root, Object.entries(files).map(([path, content]) => ({ path, content })), out, 'refs/heads/agent-journal').then((oid) => ({ oid, out }));
};
const gitBlobId = (text: string) => execFileSync('git', ['hash-object', '--stdin'], { input: text, encoding: 'utf8' }).trim();

test('buildTrees writes each file as git would, and reads back through treeAtPath and fileAtPath', async () => {
  const first = await build(undefined, { 'runs/r/run.json': '{}\n', 'runs/r/steps/000/000001-model.json': '{"a":1}\n' });
  assert.equal(await fileAtPath(source, first.oid, 'runs/r/run.json'), gitBlobId('{}\n'));
  assert.deepEqual([...(await treeAtPath(source, first.oid, 'runs/r'))!.keys()].sort(), ['run.json', 'steps']);
  assert.equal(await treeAtPath(source, first.oid, 'runs/none'), undefined);
  assert.equal(await fileAtPath(source, first.oid, 'runs/r/steps'), undefined, 'a tree is not a file');

  const second = await build(first.oid, { 'runs/r/steps/001/000100-read_file.json': '{"b":2}\n' });
  const shard = async (root: string) => (await treeAtPath(source, root, 'runs/r/steps'))!.get('000')!.oid;
  assert.equal(await shard(second.oid), await shard(first.oid), 'the untouched shard is reused, not rebuilt');
  assert.ok(second.out.every((object) => object.type !== 'blob' || object.oid === gitBlobId('{"b":2}\n')), 'only the new file is a new blob');
});

test('a step file already on the branch is never replaced by other content', async () => {
  const first = await build(undefined, { 'runs/r/steps/000/000001-model.json': '{"a":1}\n' });
  await assert.rejects(build(first.oid, { 'runs/r/steps/000/000001-model.json': '{"a":2}\n' }), StepAlreadyRecordedError);
  await build(first.oid, { 'runs/r/steps/000/000001-model.json': '{"a":1}\n' });
  await build(first.oid, { 'runs/r/run.json': '{"changed":true}\n' });
});
