// What a run is when its session opens it (planRun), from what its journal holds and what the
// command asked: the follow-ups and config steps to hear and the steps they take, whether it only
// replays, whether it needs a model, and what `opened` says. A journal is stood in for by the few
// things planRun reads of it (its record, its entries by kind, its positions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_STEP_KIND, USER_STEP_KIND } from '../../src/agent/loop.js';
import type { JournalEntry, RunRecord } from '../../src/journal/entry.js';
import { planRun } from '../../src/session/run-plan.js';
import type { RunJournal } from '../../src/valve/run-journal.js';

type Target = Parameters<typeof planRun>[1];

// A recorded result entry of `kind` at `step` with `input`.
function entry(step: number, kind: string, input: unknown): JournalEntry {
  return { format: 1, run: 'r', step, kind, phase: 'result', key: `${kind}:${step}`, description: kind, input, startedAt: '2026-01-01T00:00:00Z', attempt: 1 } as unknown as JournalEntry;
}

// A journal holding `entries` (its last position `last`, `finished` finished ones) under `record`.
function journal(options: { status?: RunRecord['status']; entries?: JournalEntry[]; last?: number; finished?: number; inFlight?: boolean; refused?: boolean; interruptedAt?: string; instructions?: string } = {}): RunJournal {
  const entries = options.entries ?? [];
  const record = options.status && ({ id: 'r', task: 'fix it', status: options.status, attempts: [{ number: 1, ...(options.interruptedAt ? { interruptedAt: options.interruptedAt } : {}) }], ...(options.refused ? { refused: true } : {}) } as unknown as RunRecord);
  const last = options.last ?? entries.reduce((max, e) => Math.max(max, e.step), 0);
  return {
    record: { current: record, killedAttempt: undefined },
    history: { entries: (kind?: string) => entries.filter((e) => kind === undefined || e.kind === kind), lastPosition: last, finishedCount: options.finished ?? last, inFlight: Boolean(options.inFlight) },
    config: options.instructions ? { instructions: { file: options.instructions, chars: 1 } } : undefined,
  } as unknown as RunJournal;
}

const target = (t: Partial<Target> = {}): Target => ({ model: 'claude-a', ...t });

test('a new run: no follow-ups, a model asked, opened as new with its instructions file', () => {
  const plan = planRun(journal({ instructions: 'AGENTS.md' }), target());
  assert.deepEqual({ replayOnly: plan.replayOnly, changesOnly: plan.changesOnly, asksModel: plan.asksModel, followUps: plan.followUps, configChanges: plan.configChanges }, { replayOnly: false, changesOnly: false, asksModel: true, followUps: [], configChanges: [] });
  assert.deepEqual(plan.opened, { model: 'claude-a', openedAs: 'new', recordedSteps: 0, interrupted: false, inFlight: false, instructions: 'AGENTS.md' });
});

test('a finished run asked nothing new replays only, with no model, and says it was refused when it was', () => {
  const plan = planRun(journal({ status: 'finished', last: 4, refused: true }), target());
  assert.equal(plan.replayOnly, true);
  assert.equal(plan.asksModel, false);
  assert.equal(plan.opened.openedAs, 'finished');
  assert.equal(plan.opened.refused, true);
  assert.equal(plan.opened.recordedSteps, 4);
});

test('a running run with steps resumes, interrupted when its last attempt was, in flight when its last step is', () => {
  const plan = planRun(journal({ status: 'running', last: 3, inFlight: true, interruptedAt: '2026-01-01T00:00:01Z' }), target());
  assert.equal(plan.opened.openedAs, 'resuming');
  assert.equal(plan.opened.interrupted, true);
  assert.equal(plan.opened.inFlight, true);
  assert.equal(plan.asksModel, true);
});

test('a follow-up to a finished run takes the step after its last, with what it sends expanded only then', () => {
  let expanded = 0;
  const plan = planRun(journal({ status: 'finished', last: 5 }), target({ followUp: 'now the tests', followUpSent: () => (expanded++, 'now the tests\n\n<file>') }));
  assert.deepEqual(plan.followUps, [{ message: 'now the tests', sent: 'now the tests\n\n<file>', step: 6 }]);
  assert.equal(expanded, 1);
  assert.equal(plan.opened.openedAs, 'continuing');
  assert.equal(plan.opened.followUpStep, 6);
  assert.equal(plan.replayOnly, false);
});

test('the identical follow-up again before the answer resumes it (not added twice); after the answer it is a new message', () => {
  const recorded = [entry(3, USER_STEP_KIND, { message: 'yes', changedFiles: [{ path: 'a', change: 'modified' }] })];
  const resumed = planRun(journal({ status: 'running', entries: recorded, last: 4 }), target({ followUp: 'yes', followUpSent: () => assert.fail('a recorded follow-up sends what it sent') }));
  assert.deepEqual(resumed.followUps, [{ message: 'yes', changedFiles: [{ path: 'a', change: 'modified' }], step: 3 }]);
  assert.equal(resumed.opened.followUpGivenAt, 3);
  assert.equal(resumed.opened.openedAs, 'resuming');
  const again = planRun(journal({ status: 'finished', entries: recorded, last: 6 }), target({ followUp: 'yes' }));
  assert.deepEqual(again.followUps.map((f) => f.step), [3, 7]);
  // A message the person sent in a session is always new, even before the answer.
  const sent = planRun(journal({ status: 'running', entries: recorded, last: 4 }), target({ followUp: 'yes', newMessage: true }));
  assert.deepEqual(sent.followUps.map((f) => f.step), [3, 5]);
});

test('a change of model is its own step before the follow-up, a compaction after it, and the run then uses the new model', () => {
  const plan = planRun(journal({ status: 'finished', last: 2 }), target({ modelChange: 'claude-b', compact: true, followUp: 'go on' }));
  assert.deepEqual(plan.configChanges, [{ model: 'claude-b', step: 3 }, { compact: true, step: 4 }]);
  assert.deepEqual(plan.followUps.map((f) => f.step), [5]);
  assert.equal(plan.model, 'claude-b');
  assert.equal(plan.changesOnly, false);
});

test('the recorded model change is the model in use, and asking for it again adds nothing', () => {
  const recorded = [entry(2, CONFIG_STEP_KIND, { model: 'claude-b' }), entry(3, CONFIG_STEP_KIND, { compact: true }), entry(4, CONFIG_STEP_KIND, { other: 1 })];
  const plan = planRun(journal({ status: 'running', entries: recorded, last: 5 }), target({ modelChange: 'claude-b' }));
  assert.deepEqual(plan.configChanges, [{ model: 'claude-b', step: 2 }, { compact: true, step: 3 }]);
  assert.equal(plan.model, 'claude-b');
  assert.equal(plan.opened.model, 'claude-b');
});

test('a change of model alone to a finished run asks no model and goes no further; a compaction alone asks one', () => {
  const change = planRun(journal({ status: 'finished', last: 2 }), target({ modelChange: 'claude-b' }));
  assert.deepEqual([change.changesOnly, change.asksModel, change.replayOnly], [true, false, false]);
  const compact = planRun(journal({ status: 'finished', last: 2 }), target({ compact: true }));
  assert.deepEqual([compact.changesOnly, compact.asksModel, compact.replayOnly], [true, true, false]);
});
