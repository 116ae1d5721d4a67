// A run's totals added up one entry at a time: files, the last step and whether it has its result,
// model calls (turns and compactions), tokens, the latest activity, and the checkpoint trail a
// resumed run asks of its past; a snapshot's state goes on as if its entries had been added.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENTRY_FORMAT, type JournalEntry } from '../../src/journal/entry.js';
import { countTotals, EntryTotals } from '../../src/valve/run-totals.js';

const tree = (c: string) => c.repeat(40);
function entry(step: number, kind: string, phase: 'intent' | 'result', extra: Partial<JournalEntry> = {}): JournalEntry {
  return { format: ENTRY_FORMAT, run: 'r', step, kind, phase, key: `${kind}:0`, description: kind, input: {}, startedAt: `2026-01-01T00:00:0${step}.000Z`, attempt: 1, ...(phase === 'result' ? { result: null } : {}), ...extra };
}

const run: JournalEntry[] = [
  entry(1, 'model', 'result', { usage: { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 40 }, finishedAt: '2026-01-01T00:00:01.500Z' }),
  entry(2, 'run_bash', 'intent'),
  entry(2, 'run_bash', 'result', { checkpoint: tree('a'), finishedAt: '2026-01-01T00:00:02.500Z' }),
  entry(3, 'user', 'result', { checkpoint: tree('b') }),
  entry(4, 'edit_file', 'result', { checkpoint: tree('b') }),
  entry(5, 'compact', 'result', { usage: { inputTokens: 50, outputTokens: 5, cacheCreationInputTokens: 7 } }),
  entry(6, 'run_bash', 'intent', { checkpoint: tree('c') }),
];

describe('run totals', () => {
  it('count files, turns and compactions, tokens, the latest time, and a last step still in flight', () => {
    assert.deepEqual(countTotals(run), {
      files: 7,
      lastStep: 6,
      modelCalls: 2,
      tokens: { input: 150, output: 15, cacheCreation: 7, cacheRead: 40 },
      lastActivity: '2026-01-01T00:00:06.000Z',
      inFlight: true,
    });
    assert.equal(countTotals(run.slice(0, 6)).inFlight, false);
    assert.deepEqual(countTotals([]), { files: 0, lastStep: 0, modelCalls: 0, tokens: { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 }, lastActivity: null, inFlight: false });
  });

  it('keep the last checkpoint and each change of checkpoint, marking the ones a person\'s step recorded', () => {
    const tally = new EntryTotals();
    for (const e of run) tally.add(e);
    assert.deepEqual(tally.lastCheckpoint, { tree: tree('c'), step: 6, finishedAt: undefined });
    assert.deepEqual(tally.checkpoints, [{ tree: tree('a'), person: false }, { tree: tree('b'), person: true }, { tree: tree('c'), person: false }]);
  });

  it('tell the totals with an entry about to be written without adding it', () => {
    const tally = new EntryTotals();
    for (const e of run) tally.add(e);
    const next = entry(6, 'run_bash', 'result', { finishedAt: '2026-01-01T00:00:09.000Z' });
    assert.deepEqual(tally.totals(next), countTotals([...run, next]));
    assert.equal(tally.totals(next).inFlight, false);
    assert.equal(tally.totals().inFlight, true, 'the entry was not added');
    assert.equal(tally.totals().files, 7);
  });

  it('go on from a snapshot\'s state, through JSON, as if its entries had been added', () => {
    const first = new EntryTotals();
    for (const e of run.slice(0, 4)) first.add(e);
    const resumed = EntryTotals.from(JSON.parse(JSON.stringify(first.state())));
    for (const e of run.slice(4)) resumed.add(e);
    const whole = new EntryTotals();
    for (const e of run) whole.add(e);
    assert.deepEqual(resumed.totals(), whole.totals());
    assert.deepEqual(resumed.state(), whole.state());
    assert.equal(new EntryTotals().state().latest, null);
  });
});
