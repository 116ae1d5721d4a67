// What a run on the terminal added up to, from its session events: every model call's tokens (turns
// and compactions, the replayed ones too, so a replayed run states what it cost to make), an
// estimated cost from the price table, the steps replayed and run live, and this process's time.
// Both the human ending line and the `--json` `summary` event are made from it, and its figures are
// the journal's: a model call, its tokens and what replaying it saved are counted as `runs`, `log`
// and the HTML page count them (report/summarize.ts: isModelKind, beginsWork, savingStartsAt).
// SessionCost adds up the turns of an interactive session for /cost.
// Tested in test/cli/run-tally.test.ts.
import { estimateCost, priceFor } from '../../model/pricing.js';
import { addTokens, beginsWork, isModelKind, roundCost, savingStartsAt, zeroTokens } from '../../report/summarize.js';
import type { TokenTotals } from '../../report/summary-types.js';
import type { SessionEvent } from '../../session/index.js';
import { formatCount, formatDuration, formatUsd, plural } from '../../format/numbers.js';

/** Token counts of a run, as the `summary` event reports them. */
export type TallyTokens = TokenTotals;

/** The totals a run ends with. */
export interface TallyTotals {
  /** Every model call's tokens (turns and compactions), replayed and live. */
  tokens: TallyTokens;
  /** The estimate of what those tokens cost at list prices (docs/cli.md, "Cost is an estimate"). */
  estimatedCostUsd: number;
  /** Of them, what this process spent live. */
  liveTokens: TallyTokens;
  liveCostUsd: number;
  /** Model calls (turns and compactions), replayed and live; of them, made live by this process. */
  modelCalls: number;
  liveModelCalls: number;
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
    liveModelCalls: 0,
    replayedSteps: 0,
    liveSteps: 0,
  };
  private model = '';
  private runId = '';
  // Whether any model call was priced (a scripted model costs nothing, so its runs show no cost).
  private priced = false;
  // Where saving can start: the steps that began a piece of work (a follow-up, a /model or /compact),
  // replayed or this process's first live one, and the follow-up `opened` names.
  private readonly boundaries: number[] = [];
  private firstLiveStep: number | undefined;
  // The replayed steps, each as much as what it saved needs (savings() picks those past the boundary).
  private readonly replayed: ReplayedStep[] = [];
  private replayStarted: number | undefined;
  private replayMs = 0;

  /** Takes one session event into the totals. */
  add(event: SessionEvent): void {
    if (event.type === 'opened') {
      this.model = event.model;
      this.runId = event.run;
      if (event.followUpStep) this.boundaries.push(event.followUpStep);
    }
    if (event.type === 'started' && this.firstLiveStep === undefined) {
      this.firstLiveStep = event.position;
      if (beginsWork(event.kind)) this.boundaries.push(event.position);
    }
    if (event.type !== 'replayed' && event.type !== 'recorded') return;
    if (event.type === 'recorded' && this.firstLiveStep === undefined) this.firstLiveStep = event.position;
    const step: ReplayedStep = { position: event.position, modelCall: false, tokens: zeroTokens(), cost: 0, command: false, originalMs: 0 };
    if (event.type === 'replayed') {
      this.totals.replayedSteps++;
      this.replayStarted ??= performance.now();
      this.replayMs = Math.round(performance.now() - this.replayStarted);
      if (beginsWork(event.kind)) this.boundaries.push(event.position);
      step.originalMs = event.originalDurationMs;
      // A command that was declined (or answered as in flight) never ran: replaying it saves no command.
      step.command =
        event.kind === 'run_bash' &&
        !event.resolution &&
        (event.result as { summary?: string } | undefined)?.summary?.startsWith('declined') !== true;
      this.replayed.push(step);
    } else this.totals.liveSteps++;
    if (!isModelKind(event.kind)) return;
    step.modelCall = true;
    this.totals.modelCalls++;
    if (event.type === 'recorded') this.totals.liveModelCalls++;
    const result = event.result as
      | {
          model?: string;
          usage?: Partial<Record<'inputTokens' | 'outputTokens' | 'cacheCreationInputTokens' | 'cacheReadInputTokens', number>>;
        }
      | undefined;
    const usage = result?.usage;
    if (!usage) return;
    const tokens = {
      input: usage.inputTokens ?? 0,
      output: usage.outputTokens ?? 0,
      cacheCreation: usage.cacheCreationInputTokens ?? 0,
      cacheRead: usage.cacheReadInputTokens ?? 0,
    };
    const price = priceFor(result?.model ?? this.model);
    if (price.family !== 'scripted') this.priced = true;
    const cost = estimateCost(price, tokens);
    [step.tokens, step.cost] = [tokens, cost];
    addTokens(this.totals.tokens, tokens);
    this.totals.estimatedCostUsd += cost;
    if (event.type === 'recorded') {
      addTokens(this.totals.liveTokens, tokens);
      this.totals.liveCostUsd += cost;
    }
  }

  /**
   * A held run's turn (an interactive session's run kept open, nothing replayed) goes on from the
   * session's last tally of it: what that one counted stands as this turn's replayed steps, as
   * they stood when every turn replayed the run first. What this turn spends live is its own.
   */
  carry(previous: RunTally): void {
    const t = previous.get();
    addTokens(this.totals.tokens, t.tokens);
    this.totals.estimatedCostUsd += t.estimatedCostUsd;
    this.totals.modelCalls += t.modelCalls;
    this.totals.replayedSteps += t.replayedSteps + t.liveSteps;
    if (previous.isPriced) this.priced = true;
  }

  /** The run the tally is of (from its `opened` event; '' before it). */
  get run(): string {
    return this.runId;
  }

  /** Whether any model call was priced (a run made only by a scripted model costs nothing). */
  get isPriced(): boolean {
    return this.priced;
  }

  /**
   * What replay saved so far: the replayed steps that would have run again without the journal,
   * from where the piece of work this process went on with began. The steps before it (the
   * conversation a new message or a /model or /compact goes on from) had ended: they save nothing.
   */
  savings(): TallySavings {
    const from = savingStartsAt(this.boundaries, this.firstLiveStep ?? Number.POSITIVE_INFINITY);
    const saved: TallySavings = {
      replayedSteps: 0,
      modelCalls: 0,
      tokens: zeroTokens(),
      estimatedCostUsd: 0,
      commands: 0,
      originalMs: 0,
      replayMs: this.replayMs,
    };
    for (const step of this.replayed) {
      if (step.position < from) continue;
      saved.replayedSteps++;
      saved.originalMs += step.originalMs;
      if (step.command) saved.commands++;
      if (step.modelCall) saved.modelCalls++;
      addTokens(saved.tokens, step.tokens);
      saved.estimatedCostUsd += step.cost;
    }
    return { ...saved, estimatedCostUsd: roundCost(saved.estimatedCostUsd) };
  }

  /** The totals so far (costs rounded to 6 decimals, so JSON stays stable). */
  get(): TallyTotals {
    const t = this.totals;
    return {
      ...t,
      tokens: { ...t.tokens },
      liveTokens: { ...t.liveTokens },
      estimatedCostUsd: roundCost(t.estimatedCostUsd),
      liveCostUsd: roundCost(t.liveCostUsd),
      elapsedMs: Math.round(performance.now() - this.started),
    };
  }

  /**
   * `Tokens 4,826 in, 22 out (~$0.01; live this time 1,630 in, 5 out, <$0.01) · 3 model calls · 5 steps (3 replayed, 2 live) · 1.2 s`.
   * A run whose every model call was scripted shows no cost: it called no API.
   */
  line(): string {
    const t = this.get();
    const live =
      t.replayedSteps && t.liveSteps
        ? `; live this time ${tokensText(t.liveTokens)}${this.priced ? `, ${formatUsd(t.liveCostUsd)}` : ''}`
        : '';
    const cost = this.priced ? `${formatUsd(t.estimatedCostUsd)} estimated` : 'scripted model: no cost';
    return (
      `Tokens ${tokensText(t.tokens)} (${cost}${live}) · ` +
      `${plural(t.modelCalls, 'model call')} · ${plural(t.replayedSteps + t.liveSteps, 'step')} (${t.replayedSteps} replayed, ${t.liveSteps} live) · ${formatDuration(t.elapsedMs)}`
    );
  }

  /**
   * One sentence on what replay saved, naming only what it saved (`3 model calls, 5,305 tokens, 1
   * command not re-run`), or '' when nothing replayed would have run again (a follow-up's
   * conversation rebuilt from the journal saves nothing).
   */
  savedLine(): string {
    const s = this.savings();
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

// One replayed step, as much of it as what replaying it saved needs.
interface ReplayedStep {
  position: number;
  modelCall: boolean;
  tokens: TallyTokens;
  cost: number;
  command: boolean;
  originalMs: number;
}

/**
 * The figures of an interactive session's turns, for /cost: the run's totals as its last turn
 * found them (every turn replays the run before it, so its tally is the whole run's) and what the
 * session's turns made live on that run, added up. A turn on another run (/new, /fork) starts
 * the count again.
 */
export class SessionCost {
  private last: RunTally | undefined;
  private readonly live = { tokens: zeroTokens(), costUsd: 0, modelCalls: 0 };

  /** Takes a turn's tally, once the turn has ended. */
  add(tally: RunTally): void {
    if (!tally.run) return; // refused before it opened its run: nothing was spent
    if (this.last && tally.run !== this.last.run) this.clear();
    const t = tally.get();
    addTokens(this.live.tokens, t.liveTokens);
    this.live.costUsd += t.liveCostUsd;
    this.live.modelCalls += t.liveModelCalls;
    this.last = tally;
  }

  /** The tally of the session's last turn (the run's totals then), if a turn ended. */
  get lastTally(): RunTally | undefined {
    return this.last;
  }

  /** Forgets the run and what was spent on it (the next message starts a new run). */
  clear(): void {
    this.last = undefined;
    Object.assign(this.live, { tokens: zeroTokens(), costUsd: 0, modelCalls: 0 });
  }

  /**
   * `Tokens 8,780 in, 48 out (~$0.03 estimated; live this session 3,543 in, 8 out, ~$0.01) · 5
   * model calls (2 live this session) · 10 steps`, or undefined before any turn ended.
   */
  line(): string | undefined {
    if (!this.last) return undefined;
    const t = this.last.get();
    const priced = this.last.isPriced;
    const cost = priced ? `${formatUsd(t.estimatedCostUsd)} estimated` : 'scripted model: no cost';
    const live = `live this session ${tokensText(this.live.tokens)}${priced ? `, ${formatUsd(roundCost(this.live.costUsd))}` : ''}`;
    return `Tokens ${tokensText(t.tokens)} (${cost}; ${live}) · ${plural(t.modelCalls, 'model call')} (${this.live.modelCalls} live this session) · ${plural(t.replayedSteps + t.liveSteps, 'step')}`;
  }
}

function tokensText(tokens: TallyTokens): string {
  return `${formatCount(tokens.input)} in, ${formatCount(tokens.output)} out`;
}
