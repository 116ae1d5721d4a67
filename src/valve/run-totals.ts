// Adding up a run's entries for its run.json (RunRecord.totals), so `savepoint runs` can list a
// thousand runs without reading every entry of every one; and, as they are added, what a resumed
// run asks of its past (its last checkpoint), so that nothing reads every entry again. Pure code.
import type { JournalEntry, RunTotals } from '../journal/entry.js';

/** The checkpoint a run recorded last (in journal order), the step that recorded it, and when that step finished. */
export interface LastCheckpoint {
  tree: string;
  step: number;
  finishedAt: string | undefined;
}

/** A checkpoint in a run's trail; `person`: recorded by a user step, the person's own files kept as they were. */
export interface CheckpointMark {
  tree: string;
  person: boolean;
}

/** What EntryTotals holds, as plain JSON: a snapshot keeps it, and a resume from the snapshot goes on from it. */
export interface EntryTotalsState {
  files: number;
  lastStep: number;
  lastFinished: boolean;
  modelCalls: number;
  tokens: { input: number; output: number; cacheCreation: number; cacheRead: number };
  lastActivity: string | null;
  /** The latest time seen, in ms (null: none yet; JSON has no -Infinity). */
  latest: number | null;
  checkpoint?: LastCheckpoint;
  trail: CheckpointMark[];
}

/**
 * A run's entries added up one at a time, in journal order: a few numbers, whatever the run's
 * length. An opened run's are added as they are read and checked (readKeptEntries), and each
 * entry the process writes after them, so its totals never need its entries again.
 */
export class EntryTotals {
  private files = 0;
  private lastStep = 0;
  // Whether the last step has a result (inFlight is its opposite).
  private lastFinished = false;
  private modelCalls = 0;
  private readonly tokens = { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 };
  private lastActivity: string | null = null;
  private latest = Number.NEGATIVE_INFINITY;
  private checkpoint: LastCheckpoint | undefined;
  // Each checkpoint that differs from the one before it, in order, and whether a person's step recorded it.
  private trail: CheckpointMark[] = [];

  /** Counts one entry (its input and result are not looked at). */
  add(entry: JournalEntry): void {
    this.files++;
    if (entry.step > this.lastStep) [this.lastStep, this.lastFinished] = [entry.step, false];
    for (const time of [entry.startedAt, entry.finishedAt]) {
      const at = time ? Date.parse(time) : Number.NaN;
      if (at > this.latest) [this.latest, this.lastActivity] = [at, time!];
    }
    if (entry.checkpoint) {
      this.checkpoint = { tree: entry.checkpoint, step: entry.step, finishedAt: entry.finishedAt };
      // A user step's checkpoint is the person's files, kept: what changed there is not the run's writing.
      if (this.trail.at(-1)?.tree !== entry.checkpoint) this.trail.push({ tree: entry.checkpoint, person: entry.kind === 'user' });
    }
    if (entry.phase !== 'result') return;
    if (entry.step === this.lastStep) this.lastFinished = true;
    // A model call is a turn or the call that compacts the conversation: both are asked and paid for.
    if (entry.kind === 'model' || entry.kind === 'compact') this.modelCalls++;
    if (entry.usage) {
      this.tokens.input += entry.usage.inputTokens ?? 0;
      this.tokens.output += entry.usage.outputTokens ?? 0;
      this.tokens.cacheCreation += entry.usage.cacheCreationInputTokens ?? 0;
      this.tokens.cacheRead += entry.usage.cacheReadInputTokens ?? 0;
    }
  }

  /** The totals of the entries added, and of `next` too when given (an entry about to be written), without adding it. */
  totals(next?: JournalEntry): RunTotals {
    if (next) {
      const copy = this.copy();
      copy.add(next);
      return copy.totals();
    }
    const inFlight = this.lastStep > 0 && !this.lastFinished;
    return {
      files: this.files,
      lastStep: this.lastStep,
      modelCalls: this.modelCalls,
      tokens: { ...this.tokens },
      lastActivity: this.lastActivity,
      inFlight,
    };
  }

  /** The last checkpoint an entry added recorded, if any. */
  get lastCheckpoint(): LastCheckpoint | undefined {
    return this.checkpoint;
  }

  /** Every checkpoint the run recorded, in order, each once where it changed: what restores ask of which files the run wrote. */
  get checkpoints(): readonly CheckpointMark[] {
    return this.trail;
  }

  /** What the entries added up to, as JSON (see EntryTotalsState). */
  state(): EntryTotalsState {
    const latest = Number.isFinite(this.latest) ? this.latest : null;
    return {
      files: this.files,
      lastStep: this.lastStep,
      lastFinished: this.lastFinished,
      modelCalls: this.modelCalls,
      tokens: { ...this.tokens },
      lastActivity: this.lastActivity,
      latest,
      ...(this.checkpoint ? { checkpoint: { ...this.checkpoint } } : {}),
      trail: this.trail.map((mark) => ({ ...mark })),
    };
  }

  /** Totals that go on from `state` (a snapshot's), as if the entries it counted had been added. */
  static from(state: EntryTotalsState): EntryTotals {
    const tally = new EntryTotals();
    const { latest, checkpoint, trail, tokens, ...counts } = state;
    Object.assign(tally, counts, {
      latest: latest ?? Number.NEGATIVE_INFINITY,
      tokens: { ...tokens },
      trail: trail.map((mark) => ({ ...mark })),
      checkpoint: checkpoint ? { ...checkpoint } : undefined,
    });
    return tally;
  }

  private copy(): EntryTotals {
    const copy = new EntryTotals();
    Object.assign(copy, this, { tokens: { ...this.tokens }, trail: [...this.trail] });
    return copy;
  }
}

/** The totals of a run whose entries are `entries` (in journal order). */
export function countTotals(entries: readonly JournalEntry[]): RunTotals {
  const tally = new EntryTotals();
  for (const entry of entries) tally.add(entry);
  return tally.totals();
}
