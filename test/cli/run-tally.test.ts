// What a run adds up to, fed the session events a run emits: savings name only what replay really
// saved (not a follow-up's rebuilt conversation, not a declined command), and a scripted model
// shows no cost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunTally, SessionCost } from '../../src/cli/view/run-tally.js';
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

  it('counts a compaction as a model call, replayed or live, with its tokens', () => {
    const compaction = (type: 'replayed' | 'recorded', position: number): SessionEvent =>
      type === 'replayed'
        ? { type, position, kind: 'compact', description: 'compact: asked for', summary: 's', originalDurationMs: 80, result: { usage: { inputTokens: 700, outputTokens: 20 } } }
        : { type, position, kind: 'compact', description: 'compact: asked for', summary: 's', durationMs: 80, result: { usage: { inputTokens: 700, outputTokens: 20 } } };
    const tally = new RunTally();
    for (const event of [opened('claude-sonnet-4-5'), modelStep(1), compaction('replayed', 2), { type: 'started', position: 3, kind: 'compact', description: 'compact: asked for' } as SessionEvent, compaction('recorded', 3)]) tally.add(event);
    const t = tally.get();
    assert.deepEqual([t.modelCalls, t.liveModelCalls, t.tokens.input, t.liveTokens.input], [3, 1, 2400, 700]);
    assert.match(tally.line(), /^Tokens 2,400 in, 90 out \(<\$0\.01 estimated; live this time 700 in, 20 out, <\$0\.01\) · 3 model calls · 3 steps \(2 replayed, 1 live\)/);
  });

  it('saves nothing when the first live step begins new work (a /model or /compact config step)', () => {
    const tally = new RunTally();
    for (const event of [opened('claude-sonnet-4-5'), modelStep(1), command(2), modelStep(3), { type: 'started', position: 4, kind: 'config', description: 'config compact' } as SessionEvent]) tally.add(event);
    assert.equal(tally.savings().replayedSteps, 0);
    assert.equal(tally.savedLine(), '');
  });

  it('SessionCost: /cost shows the run as the last turn found it and what the session made live on it, turn after turn', () => {
    const turn = (live: number): RunTally => {
      const tally = new RunTally();
      tally.add(opened('claude-sonnet-4-5'));
      for (let step = 1; step <= live; step++) tally.add({ type: 'recorded', position: step, kind: 'model', description: `model turn ${step}`, summary: 'answers', durationMs: 1, result: { model: 'claude-sonnet-4-5', usage: { inputTokens: 1000, outputTokens: 50 } } });
      return tally;
    };
    const cost = new SessionCost();
    assert.equal(cost.line(), undefined);
    cost.add(turn(1));
    cost.add(turn(2));
    assert.match(cost.line()!, /^Tokens 2,000 in, 100 out \(<\$0\.01 estimated; live this session 3,000 in, 150 out, ~\$0\.01\) · 2 model calls \(3 live this session\) · 2 steps$/);
    cost.clear();
    assert.equal(cost.line(), undefined);
  });

  it('shows no cost for a scripted model', () => {
    const tally = new RunTally();
    for (const event of [opened('script:demo.json'), modelStep(1, 'scripted-demo')]) tally.add(event);
    assert.match(tally.line(), /^Tokens 1,000 in, 50 out \(scripted model: no cost\) · 1 model call · 1 step \(1 replayed, 0 live\)/);
    assert.doesNotMatch(tally.line(), /\$/);
    assert.equal(tally.get().estimatedCostUsd, 0);
  });
});
