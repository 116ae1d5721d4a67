// The pure run summarizer on hand-built entries: statuses, the attempts' replay marks, totals, what
// resuming saved (with the price table), and comparing two journals' copies of a run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENTRY_FORMAT, RUN_FORMAT, type JournalEntry, type RunRecord } from '../../src/journal/entry.js';
import { estimateCost, priceFor } from '../../src/model/pricing.js';
import { buildTimeline, compareEntries, summarizeRun } from '../../src/report/summarize.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function entry(step: number, kind: string, attempt: number, extra: Partial<JournalEntry> = {}): JournalEntry {
  return {
    format: ENTRY_FORMAT,
    run: 'r1',
    step,
    kind,
    phase: 'result',
    key: `${kind}:${step}`,
    description: `${kind} ${step}`,
    input: {},
    result: kind === 'model' ? { model: 'claude-sonnet-4-5', content: [], stopReason: 'tool_use' } : { output: 'ok', isError: false, summary: 'ok' },
    summary: 'ok',
    startedAt: at(step),
    finishedAt: at(step + 0.5),
    durationMs: step * 100,
    attempt,
    ...(kind === 'model' ? { usage: { inputTokens: 1000, outputTokens: 100 } } : {}),
    ...extra,
  };
}

function record(status: RunRecord['status'], firstLiveSteps: number[]): RunRecord {
  return {
    format: RUN_FORMAT,
    id: 'r1',
    task: 'do it',
    model: 'claude-sonnet-4-5',
    createdAt: at(0),
    updatedAt: at(1),
    status,
    lineage: null,
    attempts: firstLiveSteps.map((firstLiveStep, i) => ({ number: i + 1, startedAt: at(firstLiveStep), host: 'h', pid: 100 + i, firstLiveStep })),
  };
}

// model, bash, model, bash (in flight in attempt 1, answered by attempt 2), model
const crashed: JournalEntry[] = [
  entry(1, 'model', 1),
  entry(2, 'run_bash', 1),
  entry(3, 'model', 1),
  entry(4, 'run_bash', 1, { phase: 'intent', result: undefined, summary: undefined, finishedAt: undefined, durationMs: undefined }),
  entry(4, 'run_bash', 2, { resolution: 'in-flight-reported', startedAt: at(20), finishedAt: at(20), durationMs: 0 }),
  entry(5, 'model', 2, { startedAt: at(21), finishedAt: at(22) }),
];

describe('buildTimeline', () => {
  it('marks where each attempt replayed and went live, and what resuming saved', () => {
    const t = buildTimeline('r1', record('finished', [1, 4]), crashed);
    assert.equal(t.run.status, 'finished');
    assert.equal(t.run.resumes, 1);
    assert.deepEqual(t.steps.map((s) => [s.step, s.attempt, s.replayedBy]), [[1, 1, [2]], [2, 1, [2]], [3, 1, [2]], [4, 2, []], [5, 2, []]]);
    assert.equal(t.steps[3]!.startedInAttempt, 1);
    assert.equal(t.steps[3]!.resolution, 'in-flight-reported');
    assert.deepEqual(t.attempts.map((a) => [a.number, a.replayedSteps, a.liveSteps, a.leftInFlight]), [[1, 0, 3, 4], [2, 3, 2, null]]);
    assert.equal(t.saved.replayedSteps, 3);
    assert.equal(t.saved.modelCalls, 2);
    assert.equal(t.saved.commands, 1);
    assert.deepEqual(t.saved.tokens, { input: 2000, output: 200, cacheCreation: 0, cacheRead: 0 });
    assert.equal(t.saved.originalMs, 100 + 200 + 300);
    // Sonnet: $3 in, $15 out per million tokens
    assert.equal(t.saved.estimatedCostUsd, 0.009);
    assert.deepEqual(t.saved.byAttempt.map((b) => b.attempt), [2]);
    assert.equal(t.totals.modelCalls, 3);
    assert.equal(t.totals.workMs, 100 + 200 + 300 + 0 + 500);
    assert.equal(t.totals.wallMs, 21_000);
    assert.equal(t.run.lastActivity, at(22));
  });

  it('a session: messages, /compact and /model are no resumes and save nothing; a follow-up killed twice is resumed twice and each step it saved counts once', () => {
    // Attempt 1: the task (#1-#3); 2: /compact (#4 config, #5 compact); 3: /model (#6); 4: a
    // follow-up (#7 user, #8 model, #9 read) killed with #10 in flight; 5: live from #10 (#10
    // model, #11 read) killed with #12 in flight; 6: live from #12 to the end.
    const kinds = ['model', 'read_file', 'model', 'config', 'compact', 'config', 'user', 'model', 'read_file', 'model', 'read_file', 'model'];
    const attemptOf = [1, 1, 1, 2, 2, 3, 4, 4, 4, 5, 5, 6];
    const entries = kinds.map((kind, i) => entry(i + 1, kind, attemptOf[i]!, kind === 'compact' ? { usage: { inputTokens: 700, outputTokens: 20 }, result: { summary: 's' } } : {}));
    const session = record('finished', [1, 4, 6, 7, 10, 12]);
    session.attempts = session.attempts.map((a) => ([4, 5].includes(a.number) ? a : { ...a, end: { how: 'finished' as const, at: at(a.firstLiveStep + 1) } }));
    const t = buildTimeline('r1', session, entries);
    assert.equal(t.run.resumes, 2, 'two attempts came after one that did not finish');
    assert.equal(t.totals.modelCalls, 6, 'five turns and the compaction');
    assert.deepEqual(t.totals.tokens, { input: 5700, output: 520, cacheCreation: 0, cacheRead: 0 });
    assert.deepEqual(t.saved.byAttempt.map((b) => [b.attempt, b.replayedSteps, b.modelCalls]), [[5, 3, 1], [6, 5, 2]]);
    assert.deepEqual([t.saved.replayedSteps, t.saved.modelCalls, t.saved.tokens.input], [5, 2, 2000], '#7-#9, handed back twice, count once');
    assert.equal(t.saved.estimatedCostUsd, Math.round(2 * estimateCost(priceFor('claude-sonnet-4-5'), { input: 1000, output: 100, cacheCreation: 0, cacheRead: 0 }) * 1e6) / 1e6);
    // A run recorded before attempts said how they ended: every attempt but the first came after a crash.
    assert.equal(buildTimeline('r1', record('finished', [1, 4, 6]), entries).run.resumes, 2);
  });

  it('calls a run in-flight when it stopped on an intent, interrupted otherwise, running under a live lock', () => {
    const stopped = crashed.slice(0, 4);
    assert.equal(summarizeRun('r1', record('running', [1]), stopped).status, 'in-flight');
    assert.equal(summarizeRun('r1', record('running', [1]), crashed.slice(0, 3)).status, 'interrupted');
    assert.equal(summarizeRun('r1', record('running', [1]), stopped, { running: true }).status, 'running');
    assert.equal(summarizeRun('r1', record('failed', [1]), crashed).status, 'failed');
    assert.equal(summarizeRun('r1', record('finished', [1]), crashed, { diverged: true }).status, 'diverged');
  });

  it('reports where a run was read from', () => {
    const summary = summarizeRun('r1', record('running', [1]), crashed.slice(0, 3), { shownFrom: 'origin', sources: ['origin'] });
    assert.equal(summary.shownFrom, 'origin');
    assert.deepEqual(summary.sources, ['origin']);
  });
});

describe('compareEntries', () => {
  it('tells the same, ahead and diverged copies of a run apart', () => {
    const base = crashed.slice(0, 3);
    assert.equal(compareEntries(base, base), 'same');
    assert.equal(compareEntries(crashed, base), 'a-ahead');
    assert.equal(compareEntries(base, crashed), 'b-ahead');
    const other = [...base, entry(4, 'run_bash', 2, { startedAt: at(99) })];
    assert.equal(compareEntries(crashed.slice(0, 5), other), 'diverged');
  });
});

describe('pricing', () => {
  it('prices known families, scripted models at nothing, and marks unknown models as assumed at Sonnet rates', () => {
    assert.deepEqual(priceFor('claude-opus-4-1-20250805'), { family: 'claude-opus', inputPerMTok: 15, outputPerMTok: 75, assumed: false });
    assert.equal(priceFor('claude-haiku-4-5').inputPerMTok, 1);
    assert.equal(priceFor('claude-3-5-haiku-latest').inputPerMTok, 0.8);
    assert.deepEqual(priceFor('scripted-demo'), { family: 'scripted', inputPerMTok: 0, outputPerMTok: 0, assumed: false }, 'a scripted model costs nothing');
    assert.deepEqual(priceFor('script:fix.json'), { family: 'scripted', inputPerMTok: 0, outputPerMTok: 0, assumed: false });
    assert.deepEqual(priceFor('llama3-local'), { family: 'claude-sonnet', inputPerMTok: 3, outputPerMTok: 15, assumed: true });
    const cost = estimateCost(priceFor('claude-sonnet-4-5'), { input: 1_000_000, output: 0, cacheCreation: 1_000_000, cacheRead: 1_000_000 });
    assert.ok(Math.abs(cost - (3 + 3.75 + 0.3)) < 1e-9);
  });
});
