// What a run's journal says, for people and scripts: its status, its steps as a timeline, the marks
// where each attempt replayed and went live, its totals and what resuming saved. Pure code (no fs,
// git or process): the CLI reads the journal and hands the entries in, so this is testable on
// plain objects and every output format (`runs`, `log`, `--json`, `--html`) agrees.
import { isSubagentLineage, type EntryUsage, type JournalEntry, type RunRecord } from '../journal/entry.js';
import { subagentRunId } from '../journal/run-id.js';
import { estimateCost, priceFor } from '../model/pricing.js';
import type {
  AttemptEnding,
  AttemptView,
  RunContext,
  RunStatus,
  RunSummary,
  Savings,
  StepView,
  Timeline,
  TokenTotals,
} from './summary-types.js';

export type {
  AttemptEnding,
  AttemptView,
  RunContext,
  RunStatus,
  RunSummary,
  Savings,
  StepView,
  Timeline,
  TokenTotals,
} from './summary-types.js';

interface Position {
  intent?: JournalEntry;
  result?: JournalEntry;
}

/** Builds the timeline of a run from its run.json and its entries (in any order). */
export function buildTimeline(
  id: string,
  record: RunRecord | undefined,
  entries: readonly JournalEntry[],
  context: RunContext = {},
): Timeline {
  const positions = byPosition(entries);
  const attempts = record?.attempts ?? [];
  const steps = [...positions.entries()].sort(([a], [b]) => a - b).map(([step, p]) => stepView(step, p, attempts, record));
  const attemptViews = attempts.map((a, i) => attemptView(a, steps, positions, endingOf(a, i === attempts.length - 1, record, context)));
  // What each attempt saved: the steps it replayed that would have run again without the journal,
  // from where the piece of work it went on with began (savingStartsAt). An attempt that answers a
  // person's new message or change (/model, /compact) replays the run before it only to rebuild
  // the conversation: that part of the run had ended, so it saves nothing. In total, a step two
  // resumes both handed back is one step saved: each saved call is counted once.
  const finished = steps.filter((s) => s.state === 'finished');
  const boundaries = steps.filter((s) => beginsWork(s.kind)).map((s) => s.step);
  const savedSteps = new Map<number, StepView>();
  const byAttempt = attempts
    .filter((a) => a.firstLiveStep > 1)
    .map((a) => {
      const from = savingStartsAt(boundaries, a.firstLiveStep);
      const replayed = finished.filter((s) => s.step >= from && s.step < a.firstLiveStep);
      for (const s of replayed) savedSteps.set(s.step, s);
      return { attempt: a.number, ...savingsOf(replayed) };
    })
    .filter((saved) => saved.replayedSteps > 0);
  const all = savingsOf(finished);
  const first = steps[0]?.startedAt ?? record?.createdAt;
  const lastActivity = latest([record?.updatedAt, ...entries.flatMap((e) => [e.startedAt, e.finishedAt])]);
  return {
    run: summaryOf(id, record, steps, lastActivity, context),
    final: record?.final ?? null,
    // A finished run's status carries no error: an earlier attempt's is in that attempt (runs
    // recorded before a success cleared it still have one here).
    error: record?.status === 'finished' ? null : (record?.error ?? null),
    baseCommit: record?.baseCommit ?? null,
    startCheckpoint: record?.startCheckpoint ?? null,
    attempts: attemptViews,
    steps,
    totals: {
      steps: steps.length,
      modelCalls: all.modelCalls,
      commands: all.commands,
      tokens: all.tokens,
      estimatedCostUsd: all.estimatedCostUsd,
      workMs: all.originalMs,
      wallMs: first && lastActivity ? Math.max(0, Date.parse(lastActivity) - Date.parse(first)) : 0,
    },
    saved: { ...savingsOf([...savedSteps.values()]), byAttempt },
  };
}

/** The one-line summary of a run (`savepoint runs`). */
export function summarizeRun(
  id: string,
  record: RunRecord | undefined,
  entries: readonly JournalEntry[],
  context: RunContext = {},
): RunSummary {
  return buildTimeline(id, record, entries, context).run;
}

/**
 * Whether two journals' entries of one run are the same, one extends the other, or each has
 * entries the other lacks (diverged). Entries are compared by position, phase, key and start time.
 */
export function compareEntries(a: readonly JournalEntry[], b: readonly JournalEntry[]): 'same' | 'a-ahead' | 'b-ahead' | 'diverged' {
  const ids = (list: readonly JournalEntry[]) => new Set(list.map((e) => `${e.step}:${e.phase}:${e.key}:${e.startedAt}:${e.attempt}`));
  const left = ids(a);
  const right = ids(b);
  const aOnly = [...left].some((x) => !right.has(x));
  const bOnly = [...right].some((x) => !left.has(x));
  if (aOnly && bOnly) return 'diverged';
  return aOnly ? 'a-ahead' : bOnly ? 'b-ahead' : 'same';
}

/** The instruction a user step (a follow-up) recorded, or null for any other step. */
export function followUpMessage(entry: JournalEntry): string | null {
  return entry.kind === 'user' ? String((entry.input as { message?: unknown } | undefined)?.message ?? '') : null;
}

/**
 * Whether any of the run's model calls is priced: a scripted model calls no API and costs nothing,
 * so a run made only with one shows no cost at all (not "$0 estimated").
 */
export function isPricedRun(steps: readonly StepView[]): boolean {
  return steps.some((s) => s.usage !== null && priceFor(s.model ?? undefined).family !== 'scripted');
}

/** Whether a step of `kind` is a model call (a turn, or the call that compacts the conversation). */
export function isModelKind(kind: string): boolean {
  return kind === 'model' || kind === 'compact';
}

/**
 * Whether a step of `kind` begins a new piece of work in a run whose earlier work had ended: a
 * follow-up (`user`: `continue`, a message in a session) or a change the person made between turns
 * (`config`: `/model`, `/compact`, `continue --model`). The steps before it only rebuild the
 * conversation it goes on from.
 */
export function beginsWork(kind: string): boolean {
  return kind === 'user' || kind === 'config';
}

/**
 * The first step whose replay saved something for a process that went live at `firstLiveStep`:
 * the last step at or before it that began a piece of work (`boundaries`: the steps beginsWork
 * names), else the run's first. The steps before it had ended; replaying them only rebuilt the
 * conversation. A process whose first live step begins new work (a new message) saves nothing.
 */
export function savingStartsAt(boundaries: Iterable<number>, firstLiveStep: number): number {
  let from = 0;
  for (const step of boundaries) if (step <= firstLiveStep && step > from) from = step;
  return from;
}

/**
 * How many times a run was resumed after a stop: the attempts that came after one that did not
 * finish (it crashed, was interrupted, stopped at a limit or failed). An attempt that answered the
 * next message of a session, a `continue` or a `/model` after a finished one is no resume.
 */
export function resumesOf(attempts: RunRecord['attempts']): number {
  return attempts.slice(0, -1).filter((a) => (a.end?.how ?? (a.interruptedAt ? 'interrupted' : 'crashed')) !== 'finished').length;
}

function byPosition(entries: readonly JournalEntry[]): Map<number, Position> {
  const positions = new Map<number, Position>();
  for (const entry of entries) {
    const position = positions.get(entry.step) ?? {};
    position[entry.phase] = entry;
    positions.set(entry.step, position);
  }
  return positions;
}

function stepView(step: number, p: Position, attempts: RunRecord['attempts'], record: RunRecord | undefined): StepView {
  const entry = (p.result ?? p.intent)!;
  const result = p.result?.result as { model?: unknown; isError?: unknown } | undefined;
  const input = entry.input as { model?: unknown } | undefined;
  const isModel = isModelKind(entry.kind);
  const model = isModel ? (stringOr(result?.model) ?? stringOr(input?.model) ?? record?.model ?? null) : null;
  const startedInAttempt = p.intent && p.result && p.intent.attempt !== p.result.attempt ? p.intent.attempt : null;
  return {
    step,
    kind: entry.kind,
    description: entry.description,
    summary: p.result?.summary ?? null,
    state: p.result ? 'finished' : 'in-flight',
    attempt: entry.attempt,
    startedInAttempt,
    startedAt: (p.intent ?? entry).startedAt,
    finishedAt: p.result?.finishedAt ?? null,
    durationMs: p.result?.durationMs ?? null,
    model,
    usage: p.result?.usage ? tokensOf(p.result.usage) : null,
    isError: !isModel && result && typeof result.isError === 'boolean' ? result.isError : null,
    resolution: p.result?.resolution ?? null,
    checkpoint: p.result?.checkpoint ?? null,
    replayedBy: p.result ? attempts.filter((a) => a.firstLiveStep > step).map((a) => a.number) : [],
    message: followUpMessage(entry),
    subagent: subagentOf(entry, p.result),
  };
}

// A task step's subagent: the run its id derives from, and the answer the step recorded.
function subagentOf(entry: JournalEntry, result: JournalEntry | undefined): StepView['subagent'] {
  if (entry.kind !== TASK_KIND) return null;
  const description = (entry.input as { description?: unknown } | undefined)?.description;
  const output = (result?.result as { output?: unknown } | undefined)?.output;
  return {
    run: subagentRunId(entry.run, entry.step),
    description: typeof description === 'string' ? description : '',
    answer: typeof output === 'string' ? output : null,
  };
}

// How attempt `a` ended: what it recorded; else, for an older run, what its status and marks say;
// else it crashed (or, the last one with its process alive, is running).
function endingOf(a: RunRecord['attempts'][number], last: boolean, record: RunRecord | undefined, context: RunContext): AttemptEnding {
  if (a.end) return { how: a.end.how, at: a.end.at, limit: a.end.limit ?? null, error: a.end.error ?? null };
  if (a.interruptedAt) return { how: 'interrupted', at: a.interruptedAt, limit: null, error: null };
  if (last && context.running) return { how: 'running', at: null, limit: null, error: null };
  // Runs recorded before attempts said how they ended: the last one ended as the run did.
  if (last && record?.status === 'finished') return { how: 'finished', at: record.updatedAt, limit: null, error: null };
  if (last && record?.status === 'failed') return { how: 'failed', at: record.updatedAt, limit: null, error: record.error ?? null };
  return { how: 'crashed', at: null, limit: null, error: null };
}

function attemptView(
  a: RunRecord['attempts'][number],
  steps: StepView[],
  positions: Map<number, Position>,
  ended: AttemptEnding,
): AttemptView {
  let leftInFlight: number | null = null;
  for (const [step, p] of positions) {
    if (p.intent?.attempt === a.number && (!p.result || p.result.attempt !== a.number)) leftInFlight = step;
  }
  return {
    number: a.number,
    startedAt: a.startedAt,
    host: a.host,
    pid: a.pid,
    firstLiveStep: a.firstLiveStep,
    replayedSteps: steps.filter((s) => s.state === 'finished' && s.step < a.firstLiveStep).length,
    liveSteps: steps.filter((s) => s.state === 'finished' && s.attempt === a.number).length,
    leftInFlight,
    rerun: a.rerun ?? null,
    interruptedAt: a.interruptedAt ?? null,
    ended,
  };
}

function summaryOf(
  id: string,
  record: RunRecord | undefined,
  steps: StepView[],
  lastActivity: string | undefined,
  context: RunContext,
): RunSummary {
  const totals = savingsOf(steps.filter((s) => s.state === 'finished'));
  const facts = {
    steps: steps.length,
    modelCalls: totals.modelCalls,
    tokens: totals.tokens,
    lastInFlight: steps.at(-1)?.state === 'in-flight',
    followUps: steps.filter((s) => s.message !== null).map((s) => s.message!),
    lastActivity: lastActivity ?? null,
  };
  return runSummary(id, record, facts, context);
}

/** What a run's summary counts from its steps, however they were counted (entries, or run.json's totals). */
export interface StepFacts {
  steps: number;
  modelCalls: number;
  tokens: TokenTotals;
  /** Its last step has an intent and no result. */
  lastInFlight: boolean;
  followUps: string[];
  lastActivity: string | null;
}

/** The one-line summary of a run from its run.json, what its steps add up to, and its context. */
export function runSummary(id: string, record: RunRecord | undefined, facts: StepFacts, context: RunContext): RunSummary {
  return {
    id,
    task: record?.task ?? '',
    status: statusOf(record, facts.lastInFlight, context),
    recordedStatus: record?.status ?? null,
    model: record?.model ?? null,
    steps: facts.steps,
    modelCalls: facts.modelCalls,
    tokens: facts.tokens,
    resumes: resumesOf(record?.attempts ?? []),
    // A fork's lineage (a new run of a task after an earlier one is said by `run` itself).
    lineage: record?.lineage && 'forkedFrom' in record.lineage ? record.lineage : null,
    parent: parentOf(record?.lineage),
    createdAt: record?.createdAt ?? null,
    lastActivity: facts.lastActivity,
    shownFrom: context.shownFrom ?? 'local',
    sources: context.sources ?? [context.shownFrom ?? 'local'],
    followUps: facts.followUps,
    worktree: record?.worktree ?? null,
    branch: record?.branch ?? null,
    wentLive: [...new Set((record?.attempts ?? []).flatMap((a) => (a.worktree === undefined ? [] : [a.worktree])))],
  };
}

// The step kind of a task call (tools/task.ts): a subagent.
const TASK_KIND = 'task';

// A subagent's parent, from its lineage.
function parentOf(lineage: RunRecord['lineage']): RunSummary['parent'] {
  return isSubagentLineage(lineage) ? { run: lineage.parentRun, step: lineage.parentStep, description: lineage.description } : null;
}

function statusOf(record: RunRecord | undefined, lastInFlight: boolean, context: RunContext): RunStatus {
  if (context.running) return 'running';
  if (context.diverged) return 'diverged';
  if (record?.status === 'finished' && record.refused) return 'refused'; // it ended, its task not done
  if (record?.status === 'finished' || record?.status === 'failed') return record.status;
  return lastInFlight ? 'in-flight' : 'interrupted';
}

function savingsOf(steps: StepView[]): Savings {
  const tokens = zeroTokens();
  let cost = 0;
  for (const s of steps) {
    if (!s.usage) continue;
    addTokens(tokens, s.usage);
    cost += estimateCost(priceFor(s.model ?? undefined), s.usage);
  }
  return {
    replayedSteps: steps.length,
    modelCalls: steps.filter((s) => isModelKind(s.kind)).length,
    // A declined command (or one answered as in flight) never ran: it is no command saved.
    commands: steps.filter((s) => s.kind === 'run_bash' && !s.resolution).length,
    tokens,
    estimatedCostUsd: roundCost(cost),
    originalMs: steps.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
  };
}

function tokensOf(usage: EntryUsage): TokenTotals {
  return {
    input: usage.inputTokens ?? 0,
    output: usage.outputTokens ?? 0,
    cacheCreation: usage.cacheCreationInputTokens ?? 0,
    cacheRead: usage.cacheReadInputTokens ?? 0,
  };
}

/** No tokens yet. */
export function zeroTokens(): TokenTotals {
  return { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 };
}

/** Adds `add` into `into`. */
export function addTokens(into: TokenTotals, add: TokenTotals): void {
  into.input += add.input;
  into.output += add.output;
  into.cacheCreation += add.cacheCreation;
  into.cacheRead += add.cacheRead;
}

/** Dollars to 6 decimals, so that JSON output is stable across floating-point sums. */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

/** The latest of `times` (ISO 8601; unparsable ones skipped), the first of equals. */
export function latest(times: Array<string | null | undefined>): string | undefined {
  let best: string | undefined;
  let bestMs = -Infinity;
  // Each time parsed once (three parses a time made this a tenth of a long run's `log`).
  for (const t of times) {
    if (!t) continue;
    const ms = Date.parse(t);
    if (Number.isNaN(ms) || (best !== undefined && ms <= bestMs)) continue;
    best = t;
    bestMs = ms;
  }
  return best;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
