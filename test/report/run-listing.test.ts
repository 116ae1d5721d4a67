// When run.json's totals are trusted for listing a run, on plain objects: only while they count
// exactly the entry files its trees list (same number, last step, in-flight state, model turns),
// and never for two files of one phase at one step.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RUN_FORMAT, type RunRecord, type RunTotals } from '../../src/journal/entry.js';
import { followUpFiles, listedSteps, trustedTotals, type ListedFile } from '../../src/report/run-listing.js';

const files: ListedFile[] = [
  { step: 1, kind: 'model', phase: 'result' },
  { step: 2, kind: 'run_bash', phase: 'intent' },
  { step: 2, kind: 'run_bash', phase: 'result' },
  { step: 3, kind: 'user', phase: 'result' },
  { step: 4, kind: 'run_bash', phase: 'intent' },
];
const totals: RunTotals = { files: 5, lastStep: 4, modelCalls: 1, tokens: { input: 10, output: 2, cacheCreation: 0, cacheRead: 0 }, lastActivity: '2026-01-01T00:00:00.000Z', inFlight: true };
const record = (t: unknown) => ({ format: RUN_FORMAT, id: 'r', task: 't', createdAt: '', updatedAt: '', status: 'running', attempts: [], totals: t }) as unknown as RunRecord;

describe('trustedTotals', () => {
  it('trusts totals that count the files listed', () => {
    assert.equal(trustedTotals(record(totals), files), totals);
    assert.equal(trustedTotals(record({ ...totals, files: 0, lastStep: 0, modelCalls: 0, inFlight: false }), []) !== undefined, true);
  });

  it('does not trust totals that lag, lie, are missing or of another shape', () => {
    for (const t of [undefined, null, 'x', { ...totals, files: 4 }, { ...totals, lastStep: 3 }, { ...totals, inFlight: false }, { ...totals, modelCalls: 2 }, { ...totals, files: 5.5 }, { ...totals, tokens: { input: 1 } }, { ...totals, lastActivity: 7 }]) {
      assert.equal(trustedTotals(record(t), files), undefined, JSON.stringify(t));
    }
    assert.equal(trustedTotals(undefined, files), undefined);
  });

  it('does not trust totals over two files of one phase at one step', () => {
    const twice = [...files.slice(0, 4), { step: 3, kind: 'model', phase: 'result' as const }, files[4]!];
    assert.equal(trustedTotals(record({ ...totals, files: 6, modelCalls: 2 }), twice), undefined);
  });

  it('shows each step by its result, else its intent, and finds the user steps', () => {
    const steps = listedSteps(files);
    assert.deepEqual(steps.map((s) => [s.step, s.shown.phase, s.finished]), [[1, 'result', true], [2, 'result', true], [3, 'result', true], [4, 'intent', false]]);
    assert.deepEqual(followUpFiles(steps), [files[3]]);
  });
});
