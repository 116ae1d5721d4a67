// What a run adds up to, fed the session events a run emits: savings name only what replay really
// saved (not a follow-up's rebuilt conversation, not a declined command), and a scripted model
// shows no cost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunTally } from '../../src/cli/view/run-tally.js';
import type { SessionEvent } from '../../src/session/index.js';

const opened = (model: string, followUpStep?: number): SessionEvent => ({ type: 'opened', run: 'r', task: 't', model, openedAs: followUpStep ? 'continuing' : 'resuming', recordedSteps: 3, interrupted: false, inFlight: false, ...(followUpStep ? { followUpStep } : {}) });
const modelStep = (position: number, model = 'claude-sonnet-4-5'): SessionEvent => ({ type: 'replayed', position, kind: 'model', description: `model turn ${position}`, summary: 'calls run_bash', originalDurationMs: 2000, result: { model, usage: { inputTokens: 1000, outputTokens: 50 } } });
const command = (position: number, resolution?: string): SessionEvent => ({ type: 'replayed', position, kind: 'run_bash', description: 'run_bash "npm test"', summary: resolution ? 'declined by the user' : 'exit 0', originalDurationMs: 500, result: {}, ...(resolution ? { resolution } : {}) });

describe('RunTally', () => {
  it('names what replay saved: model calls, tokens and the commands that ran', () => {
    const tally = new RunTally();
    for (const event of [opened('claude-sonnet-4-5'), modelStep(1), command(2), modelStep(3)]) tally.add(event);
    assert.equal(tally.savedLine().replace(/in \d+ ms/, 'in N ms'), 'Replayed 3 steps from the journal in N ms instead of 4.5 s: 2 model calls, 2,100 tokens, 1 command not re-run; 0 steps ran live.');
    assert.deepEqual({ ...tally.savings(), replayMs: 0 }, { replayedSteps: 3, modelCalls: 2, tokens: { input: 2000, output: 100, cacheCreation: 0, cacheRead: 0 }, estimatedCostUsd: 0.0075, commands: 1, originalMs: 4500, replayMs: 0 });
    assert.match(tally.line(), /\(<\$0\.01 estimated\)/);
  });

  it('counts a declined command as no command saved, and leaves out the parts that are zero', () => {
    const tally = new RunTally();
    for (const event of [opened('claude-sonnet-4-5'), command(1, 'declined')]) tally.add(event);
    assert.equal(tally.savings().commands, 0);
    assert.doesNotMatch(tally.savedLine(), /0 commands|0 model calls|not re-run/);
    assert.match(tally.savedLine(), /^Replayed 1 step from the journal in \d+ ms instead of 500 ms; 0 steps ran live\.$/);
  });

  it('saves nothing for the steps a follow-up replays to rebuild its conversation', () => {
    const tally = new RunTally();
    for (const event of [opened('claude-sonnet-4-5', 4), modelStep(1), command(2), modelStep(3)]) tally.add(event);
    assert.equal(tally.savedLine(), '');
    assert.deepEqual({ ...tally.savings(), replayMs: 0 }, { replayedSteps: 0, modelCalls: 0, tokens: { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 }, estimatedCostUsd: 0, commands: 0, originalMs: 0, replayMs: 0 });
    // The run's own totals still count every model call it made.
    assert.equal(tally.get().replayedSteps, 3);
    assert.equal(tally.get().modelCalls, 2);
    // A follow-up resumed after a crash: what it had done itself is saved.
    tally.add(command(5));
    assert.equal(tally.savings().commands, 1);
  });

  it('shows no cost for a scripted model', () => {
    const tally = new RunTally();
    for (const event of [opened('script:demo.json'), modelStep(1, 'scripted-demo')]) tally.add(event);
    assert.match(tally.line(), /^Tokens 1,000 in, 50 out \(scripted model: no cost\) · 1 model call · 1 step \(1 replayed, 0 live\)/);
    assert.doesNotMatch(tally.line(), /\$/);
    assert.equal(tally.get().estimatedCostUsd, 0);
  });
});
