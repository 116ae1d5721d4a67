// A step's code diff: its checkpoint against the closest earlier one, else the working tree the run
// started from, else its base commit (else git's empty tree); one git process for every step's diff
// of a run, each step alone saying why when a tree is missing; colours added after git, by line.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { allStepDiffs, diffBase, paintDiff, stepDiff } from '../../../src/cli/view/step-diff.js';
import { styleFor } from '../../../src/cli/terminal/style.js';
import type { Timeline } from '../../../src/report/summary-types.js';
import { gitOut } from '../../helpers/git.js';
import { useScratch } from '../../helpers/scratch.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const timeline = (steps: Array<{ step: number; checkpoint?: string }>, base: { baseCommit?: string; startCheckpoint?: string } = {}) =>
  ({ steps, baseCommit: base.baseCommit ?? null, startCheckpoint: base.startCheckpoint ?? null }) as unknown as Timeline;

describe('step diffs', () => {
  const scratch = useScratch();

  it('start from the closest earlier checkpoint, else the start, else the base commit, else an empty tree', () => {
    const [a, b, start, base] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(40)) as [string, string, string, string];
    const run = timeline([{ step: 1 }, { step: 2, checkpoint: a }, { step: 3 }, { step: 4, checkpoint: b }], { baseCommit: base, startCheckpoint: start });
    assert.deepEqual(diffBase(run, 4), { from: a, fromLabel: 'the checkpoint of #2' });
    assert.deepEqual(diffBase(run, 3), { from: a, fromLabel: 'the checkpoint of #2' });
    assert.deepEqual(diffBase(run, 2), { from: start, fromLabel: 'the working tree when the run started' });
    assert.deepEqual(diffBase(timeline([], { baseCommit: base }), 1), { from: base, fromLabel: 'the base commit dddddddddd' });
    assert.deepEqual(diffBase(timeline([]), 1), { from: EMPTY_TREE, fromLabel: 'an empty tree' });
  });

  it("diff each checkpoint against its base, one step alone or all of a run's at once, and say why a missing tree cannot be compared", async () => {
    const repo = await scratch.repo({ 'README.md': '# project\n' });
    const base = await gitOut(repo.root, ['rev-parse', 'HEAD']);
    const checkpoint = async (files: Record<string, string>) => {
      for (const [path, text] of Object.entries(files)) writeFileSync(join(repo.root, path), text);
      await gitOut(repo.root, ['add', '-A']);
      return gitOut(repo.root, ['write-tree']);
    };
    const first = await checkpoint({ 'README.md': '# project\nmore\n' });
    const third = await checkpoint({ 'new.txt': 'new\n' });
    const run = timeline([{ step: 1, checkpoint: first }, { step: 2 }, { step: 3, checkpoint: third }, { step: 4, checkpoint: third }], { baseCommit: base });

    const one = await stepDiff(repo.root, run, 1);
    assert.ok(one);
    assert.deepEqual([one.from, one.to, one.error], [base, first, null]);
    assert.match(one.text, /^diff --git a\/README\.md b\/README\.md\n[\s\S]*\n\+more\n$/);
    const three = await stepDiff(repo.root, run, 3, { stat: true });
    assert.equal(three?.fromLabel, 'the checkpoint of #1');
    assert.match(three!.text, /new\.txt \| 1 \+\n[\s\S]*\+new\n/);
    assert.equal((await stepDiff(repo.root, run, 4))?.text, '', 'a step that changed no file has an empty diff');
    assert.equal(await stepDiff(repo.root, run, 2), undefined, 'a step without a checkpoint has no diff');

    const all = await allStepDiffs(repo.root, run);
    assert.deepEqual([...all.keys()], [1, 3, 4]);
    assert.equal(all.get(1)!.from, base, 'the base commit is named as given, though diffed as its tree');
    assert.equal(all.get(1)!.text, one.text);
    assert.equal(all.get(3)!.text, (await stepDiff(repo.root, run, 3))!.text);
    assert.equal(all.get(4)!.text, '');

    const broken = timeline([{ step: 1, checkpoint: first }, { step: 2, checkpoint: 'e'.repeat(40) }], { baseCommit: base });
    const alone = await stepDiff(repo.root, broken, 2);
    assert.match(alone!.error ?? '', /^git cannot compare the trees \(.+\); fetch the journal's objects, or the base commit, first$/);
    assert.equal((await allStepDiffs(repo.root, broken)).get(1)!.text, one.text, 'the steps whose trees are here still get their diffs');
    // A missing tree between two that are here: git leaves its pair out and exits 0. The step says
    // why, and the steps after it still get their own diffs, not an empty one.
    const fourth = await checkpoint({ 'new.txt': 'newer\n' });
    const gap = timeline([{ step: 1, checkpoint: first }, { step: 2, checkpoint: 'e'.repeat(40) }, { step: 3, checkpoint: third }, { step: 4, checkpoint: fourth }], {
      baseCommit: base,
    });
    const gapDiffs = await allStepDiffs(repo.root, gap);
    assert.equal(gapDiffs.get(1)!.text, one.text);
    assert.match(gapDiffs.get(2)!.error ?? '', /^git cannot compare the trees/);
    assert.match(gapDiffs.get(3)!.error ?? '', /^git cannot compare the trees/, 'the step after the missing tree is diffed against it, and says so');
    assert.match(gapDiffs.get(4)!.text, /^diff --git a\/new\.txt b\/new\.txt\n[\s\S]*-new\n\+newer\n$/, 'a later step whose trees are here gets its diff');
  });

  it('colour a diff by line only when the style has colour', () => {
    const diff = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same';
    assert.equal(paintDiff(diff, styleFor(process.stdout, { NO_COLOR: '1' })), diff);
    const painted = paintDiff(diff, styleFor(process.stdout, { FORCE_COLOR: '1' })).split('\n');
    assert.deepEqual(painted, ['\x1b[1mdiff --git a/x b/x\x1b[22m', '\x1b[1m--- a/x\x1b[22m', '\x1b[1m+++ b/x\x1b[22m', '\x1b[36m@@ -1 +1 @@\x1b[39m', '\x1b[31m-old\x1b[39m', '\x1b[32m+new\x1b[39m', ' same']);
  });
});
