// Run ids from the task text: the identical task (up to spacing and trailing punctuation) finds the
// same run, a task differing in case is another run, the older schemes' ids are still found, --fresh
// runs count up from the base, and a prefix names a run unless it names several.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AmbiguousRunError } from '../../src/errors/index.js';
import { isValidRunId } from '../../src/journal/entry.js';
import { caseFoldedRunIdForTask, legacyRunIdForTask, normalizeTask, resolveRunId, runIdForTask, runsForTask, sameTask, taskRunBases } from '../../src/journal/run-id.js';

describe('run ids', () => {
  it('are a readable slug and a digest of the normalised task, the same for the same task however it is spaced or ended', () => {
    assert.equal(normalizeTask('  Fix   the\ttests.!?  '), 'Fix the tests');
    const id = runIdForTask('Fix the failing test');
    assert.match(id, /^fix-the-failing-test-[0-9a-f]{6}$/);
    assert.equal(runIdForTask(' Fix the  failing test. '), id);
    assert.notEqual(runIdForTask('fix the failing test'), id, 'case is kept: another task, another run');
    assert.match(runIdForTask('日本語のタスク'), /^run-[0-9a-f]{6}$/);
    const long = runIdForTask(`${'word '.repeat(30)}end`);
    assert.ok(long.length <= 47 && isValidRunId(long), long);
    assert.ok(!/--/.test(runIdForTask('a -- b')));
  });

  it('find runs of the older schemes, the current one first, each once; a case-folded one only for the very task', () => {
    const task = 'Fix the tests.';
    assert.deepEqual(taskRunBases(task), [runIdForTask(task), caseFoldedRunIdForTask(task), legacyRunIdForTask(task)]);
    assert.equal(caseFoldedRunIdForTask('FIX THE TESTS'), caseFoldedRunIdForTask('fix the tests'));
    assert.deepEqual(taskRunBases('fix the tests'), [runIdForTask('fix the tests')], 'lower case, nothing to normalise: one id in all three schemes');
    assert.deepEqual(taskRunBases('fix the tests.'), [runIdForTask('fix the tests'), legacyRunIdForTask('fix the tests.')]);
    assert.ok(sameTask('Fix the tests.', ' Fix  the tests'));
    assert.ok(!sameTask('Fix the tests', 'fix the tests'));
  });

  it('count --fresh runs up from the base, ignoring ids that only start like it', () => {
    assert.deepEqual(runsForTask('fix-abc123', []), { latest: undefined, next: 'fix-abc123' });
    assert.deepEqual(runsForTask('fix-abc123', ['fix-abc123', 'other']), { latest: 'fix-abc123', next: 'fix-abc123-2' });
    assert.deepEqual(runsForTask('fix-abc123', ['fix-abc123-3', 'fix-abc123', 'fix-abc123-x', 'fix-abc123-2', 'fix-abc1234']), { latest: 'fix-abc123-3', next: 'fix-abc123-4' });
  });

  it('resolve a run given whole or by a prefix of one id, a parent over its subagents, and refuse a prefix of several', () => {
    const ids = ['fix-aaa111', 'fix-aaa111.task4', 'fix-bbb222', 'docs-ccc333'];
    assert.equal(resolveRunId('docs', ids), 'docs-ccc333');
    assert.equal(resolveRunId('fix-aaa', ids), 'fix-aaa111');
    assert.equal(resolveRunId('fix-aaa111.task4', ids), 'fix-aaa111.task4');
    assert.equal(resolveRunId('nothing', ids), undefined);
    assert.throws(() => resolveRunId('fix-', ids), (error: unknown) => error instanceof AmbiguousRunError && error.data.matches.length === 3);
  });
});
