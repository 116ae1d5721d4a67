// What a run on the terminal added up to, from its session events: every model step's tokens (the
// replayed ones too, so a replayed run states what it cost to make), an estimated cost from the
// price table, the steps replayed and run live, and this process's time. Both the human ending line
// and the `--json` `summary` event are made from it.
import { estimateCost, priceFor } from '../../model/pricing.js';
import { addTokens, roundCost, zeroTokens } from '../../report/summarize.js';
import type { TokenTotals } from '../../report/summary-types.js';
import type { SessionEvent } from '../../session/index.js';
import { formatCount, formatDuration, formatUsd, plural } from '../../format/numbers.js';

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
  /** Steps handed back from the journal that would have run again without it (not those that only rebuilt a follow-up's conversation). */
  replayedSteps: number;
  modelCalls: number;
  tokens: TallyTokens;
  estimatedCostUsd: number;
  /** Commands that ran when they were recorded (a declined or in-flight-reported one never ran). */
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
  // Whether any model call was priced (a scripted model costs nothing, so its runs show no cost).
  private priced = false;
  // The follow-up this process answers: replayed steps before it rebuild the conversation it continues.
  private followUpStep = 0;
  private readonly saved: TallySavings = { replayedSteps: 0, modelCalls: 0, tokens: zeroTokens(), estimatedCostUsd: 0, commands: 0, originalMs: 0, replayMs: 0 };
  private replayStarted: number | undefined;

  /** Takes one session event into the totals. */
  add(event: SessionEvent): void {
    if (event.type === 'opened') {
      this.model = event.model;
      this.followUpStep = event.followUpStep ?? 0;
    }
    if (event.type !== 'replayed' && event.type !== 'recorded') return;
    // A replayed step saved something only when, without the journal, it would have run again: not
    // when it rebuilds the conversation a follow-up continues (that part of the run had ended).
    const saves = event.type === 'replayed' && event.position >= this.followUpStep;
    if (event.type === 'replayed') {
      this.totals.replayedSteps++;
      this.replayStarted ??= performance.now();
      this.saved.replayMs = Math.round(performance.now() - this.replayStarted);
      if (saves) {
        this.saved.replayedSteps++;
        this.saved.originalMs += event.originalDurationMs;
        // A command that was declined (or answered as in flight) never ran: replaying it saves no command.
        if (event.kind === 'run_bash' && !event.resolution && (event.result as { summary?: string } | undefined)?.summary?.startsWith('declined') !== true) this.saved.commands++;
      }
    } else this.totals.liveSteps++;
    if (event.kind !== 'model' && event.kind !== 'compact') return;
    if (saves) this.saved.modelCalls++;
    if (event.kind === 'model') this.totals.modelCalls++;
    const result = event.result as { model?: string; usage?: Partial<Record<'inputTokens' | 'outputTokens' | 'cacheCreationInputTokens' | 'cacheReadInputTokens', number>> } | undefined;
    const usage = result?.usage;
    if (!usage) return;
    const tokens = { input: usage.inputTokens ?? 0, output: usage.outputTokens ?? 0, cacheCreation: usage.cacheCreationInputTokens ?? 0, cacheRead: usage.cacheReadInputTokens ?? 0 };
    const price = priceFor(result?.model ?? this.model);
    if (price.family !== 'scripted') this.priced = true;
    const cost = estimateCost(price, tokens);
    if (saves) {
      addTokens(this.saved.tokens, tokens);
      this.saved.estimatedCostUsd += cost;
    }
    // The totals count model turns (a compaction's summary call is saved when replayed, as before).
    if (event.kind !== 'model') return;
    addTokens(this.totals.tokens, tokens);
    this.totals.estimatedCostUsd += cost;
    if (event.type === 'recorded') {
      addTokens(this.totals.liveTokens, tokens);
      this.totals.liveCostUsd += cost;
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

  /**
   * `Tokens 4,826 in, 22 out (~$0.01; live this time 1,630 in, 5 out, <$0.01) · 3 model calls · 5 steps (3 replayed, 2 live) · 1.2 s`.
   * A run whose every model call was scripted shows no cost: it called no API.
   */
  line(): string {
    const t = this.get();
    const liveTokens = `${formatCount(t.liveTokens.input)} in, ${formatCount(t.liveTokens.output)} out`;
    const live = t.replayedSteps && t.liveSteps ? `; live this time ${liveTokens}${this.priced ? `, ${formatUsd(t.liveCostUsd)}` : ''}` : '';
    const cost = this.priced ? `${formatUsd(t.estimatedCostUsd)} estimated` : 'scripted model: no cost';
    return (
      `Tokens ${formatCount(t.tokens.input)} in, ${formatCount(t.tokens.output)} out (${cost}${live}) · ` +
      `${plural(t.modelCalls, 'model call')} · ${plural(t.replayedSteps + t.liveSteps, 'step')} (${t.replayedSteps} replayed, ${t.liveSteps} live) · ${formatDuration(t.elapsedMs)}`
    );
  }

  /**
   * One sentence on what replay saved, naming only what it saved (`3 model calls, 5,305 tokens, 1
   * command not re-run`), or '' when nothing replayed would have run again (a follow-up's
   * conversation rebuilt from the journal saves nothing).
   */
  savedLine(): string {
    const s = this.saved;
    if (s.replayedSteps === 0) return '';
    const parts: string[] = [];
    if (s.modelCalls) parts.push(plural(s.modelCalls, 'model call'));
    const tokens = s.tokens.input + s.tokens.output;
    if (tokens) parts.push(`${formatCount(tokens)} tokens`);
    if (s.commands) parts.push(plural(s.commands, 'command'));
    const notRerun = parts.length ? `: ${parts.join(', ')} not re-run` : '';
    return (
      `Replayed ${plural(s.replayedSteps, 'step')} from the journal in ${formatDuration(s.replayMs)} instead of ${formatDuration(s.originalMs)}${notRerun}; ` +
      `${plural(this.totals.liveSteps, 'step')} ran live.`
    );
  }
}
