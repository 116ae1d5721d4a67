// What a run on the terminal added up to, from its session events: every model step's tokens (the
// replayed ones too, so a replayed run states what it cost to make), an estimated cost from the
// price table, the steps replayed and run live, and this process's time. Both the human ending line
// and the `--json` `summary` event are made from it.
import { estimateCost, priceFor } from '../../model/pricing.js';
import { addTokens, roundCost, zeroTokens } from '../../report/summarize.js';
import type { TokenTotals } from '../../report/summary-types.js';
import type { SessionEvent } from '../../session/index.js';
import { formatCount, formatDuration, formatUsd } from '../../format/numbers.js';

/** Token counts of a run, as the `summary` event reports them. */
export type TallyTokens = TokenTotals;

/** The totals a run ends with. */
export interface TallyTotals {
  /** Every model call's tokens, replayed and live. */
  tokens: TallyTokens;
  /** The estimate of what those tokens cost at list prices (docs/cli.md, "Cost is an estimate"). */
  estimatedCostUsd: number;
  /** Of them, what this process spent live. */
  liveTokens: TallyTokens;
  liveCostUsd: number;
  modelCalls: number;
  replayedSteps: number;
  liveSteps: number;
  /** This process, from start to now. */
  elapsedMs: number;
}

/** What replaying saved: the replayed steps' model calls, tokens, commands and original time. */
export interface TallySavings {
  replayedSteps: number;
  modelCalls: number;
  tokens: TallyTokens;
  estimatedCostUsd: number;
  commands: number;
  /** How long the replayed steps took when they ran, and how long replaying them took. */
  originalMs: number;
  replayMs: number;
}

/** Adds up a run's steps as their events arrive. */
export class RunTally {
  private readonly started = performance.now();
  private readonly totals: Omit<TallyTotals, 'elapsedMs'> = {
    tokens: zeroTokens(),
    estimatedCostUsd: 0,
    liveTokens: zeroTokens(),
    liveCostUsd: 0,
    modelCalls: 0,
    replayedSteps: 0,
    liveSteps: 0,
  };
  private model = '';
  private readonly saved: TallySavings = { replayedSteps: 0, modelCalls: 0, tokens: zeroTokens(), estimatedCostUsd: 0, commands: 0, originalMs: 0, replayMs: 0 };
  private replayStarted: number | undefined;

  /** Takes one session event into the totals. */
  add(event: SessionEvent): void {
    if (event.type === 'opened') this.model = event.model;
    if (event.type !== 'replayed' && event.type !== 'recorded') return;
    if (event.type === 'replayed') {
      this.totals.replayedSteps++;
      this.saved.replayedSteps++;
      this.saved.originalMs += event.originalDurationMs;
      this.replayStarted ??= performance.now();
      this.saved.replayMs = Math.round(performance.now() - this.replayStarted);
      // A command that was declined never ran: replaying it saves no command.
      if (event.kind === 'run_bash' && (event.result as { summary?: string } | undefined)?.summary?.startsWith('declined') !== true) this.saved.commands++;
    } else this.totals.liveSteps++;
    if (event.kind !== 'model') return;
    if (event.type === 'replayed') this.saved.modelCalls++;
    this.totals.modelCalls++;
    const result = event.result as { model?: string; usage?: Partial<Record<'inputTokens' | 'outputTokens' | 'cacheCreationInputTokens' | 'cacheReadInputTokens', number>> } | undefined;
    const usage = result?.usage;
    if (!usage) return;
    const tokens = { input: usage.inputTokens ?? 0, output: usage.outputTokens ?? 0, cacheCreation: usage.cacheCreationInputTokens ?? 0, cacheRead: usage.cacheReadInputTokens ?? 0 };
    const cost = estimateCost(priceFor(result?.model ?? this.model), tokens);
    addTokens(this.totals.tokens, tokens);
    this.totals.estimatedCostUsd += cost;
    if (event.type === 'recorded') {
      addTokens(this.totals.liveTokens, tokens);
      this.totals.liveCostUsd += cost;
    } else {
      addTokens(this.saved.tokens, tokens);
      this.saved.estimatedCostUsd += cost;
    }
  }

  /** What replay saved so far. */
  savings(): TallySavings {
    return { ...this.saved, tokens: { ...this.saved.tokens }, estimatedCostUsd: roundCost(this.saved.estimatedCostUsd) };
  }

  /** The totals so far (costs rounded to 6 decimals, so JSON stays stable). */
  get(): TallyTotals {
    const t = this.totals;
    return { ...t, tokens: { ...t.tokens }, liveTokens: { ...t.liveTokens }, estimatedCostUsd: roundCost(t.estimatedCostUsd), liveCostUsd: roundCost(t.liveCostUsd), elapsedMs: Math.round(performance.now() - this.started) };
  }

  /** `Tokens 4,826 in, 22 out (~$0.01; live this time 1,630 in, 5 out, <$0.01) · 3 model calls · 5 steps (3 replayed, 2 live) · 1.2 s`. */
  line(): string {
    const t = this.get();
    const live = t.replayedSteps && t.liveSteps ? `; live this time ${formatCount(t.liveTokens.input)} in, ${formatCount(t.liveTokens.output)} out, ${formatUsd(t.liveCostUsd)}` : '';
    return (
      `Tokens ${formatCount(t.tokens.input)} in, ${formatCount(t.tokens.output)} out (${formatUsd(t.estimatedCostUsd)} estimated${live}) · ` +
      `${t.modelCalls} model call${t.modelCalls === 1 ? '' : 's'} · ${t.replayedSteps + t.liveSteps} step${t.replayedSteps + t.liveSteps === 1 ? '' : 's'} (${t.replayedSteps} replayed, ${t.liveSteps} live) · ${formatDuration(t.elapsedMs)}`
    );
  }
}
