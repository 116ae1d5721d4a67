// What a run's journal says happened, position by position: the state replay works from. Pure
// code (STYLE: Temporal keeps replay free of I/O); the journal store feeds it entries.
import { CorruptEntryError, DivergenceError, type StepIdentity } from '../errors/index.js';
import type { JournalEntry, RunTotals } from '../journal/entry.js';
import { expandKept, isKept, keptPath, supplyKept, withoutResult, type KeptEntry } from '../journal/kept.js';
import { shortValue } from '../format/text.js';
import { canonicalJson } from './key.js';
import { EntryTotals, type CheckpointMark, type EntryTotalsState, type LastCheckpoint } from './run-totals.js';

/** The records at one position: the intent (if the step needed one) and the result (if it finished). */
export interface RecordedStep {
  intent?: JournalEntry;
  result?: JournalEntry;
}

/** A step the loop asks for: its identity, at a position of the run. */
export interface StepCall extends StepIdentity {
  position: number;
  /** The step's input, to say which part differs from the recorded one on a divergence. */
  input?: unknown;
  /** The positions of the batch it runs in (JournalEntry.batch), when it runs beside others. */
  batch?: [number, number];
}

// A position's records as held: parsed entries (written by this process, or given whole), or kept
// as bytes (read for replay, see journal/kept.ts), parsed when the step is looked up.
type Held = JournalEntry | KeptEntry;

interface HeldStep {
  intent?: Held;
  result?: Held;
}

/**
 * A run's recorded steps by position, checked whole; `lookup` says whether a step has a recorded
 * result (or throws on a divergence). It holds only the steps a lookup may still ask for: those
 * read and not yet handed back, and an intent written and not yet finished. What later needs of
 * the others (totals, the last checkpoint) is added up as entries come (EntryTotals).
 */
export class History {
  private readonly steps = new Map<number, HeldStep>();
  private readonly run: string;
  private readonly tally: EntryTotals;
  private last = 0;
  private finished = 0;

  /**
   * Builds a run's history from its entries in journal order, checking that it is whole: positions
   * 1..n with no gap, and an unfinished intent only at the very end (where a crash leaves it);
   * except within the batch the journal ends in (openBatch), whose calls finish in any order.
   * Entries kept as bytes (readKeptEntries) are parsed again only when their step is looked up.
   * `tally` is what the entries add up to when the reader counted them as it read them; without
   * it they are counted here (parsing the kept ones once). `after`: the entries are those after
   * that step, every step up to it finished (a run opened from its snapshot, valve/snapshot.ts).
   */
  constructor(
    run: string,
    entries: ReadonlyArray<JournalEntry | KeptEntry>,
    pathOf: (entry: JournalEntry) => string = () => `runs/${run}`,
    tally?: EntryTotals,
    after = 0,
  ) {
    this.run = run;
    // Opened from a snapshot after step `after`: the steps up to it are finished (the snapshot
    // says so, and was checked against the branch), and only the entries after it were read.
    this.last = after;
    this.finished = after;
    const where = (entry: Held): string => (isKept(entry) ? keptPath(entry) : pathOf(entry));
    for (const entry of entries) {
      const step = this.steps.get(entry.step) ?? {};
      if (step[entry.phase]) throw new CorruptEntryError(where(entry), `step ${entry.step} has two ${entry.phase} entries`, entry.step);
      if (step.intent && step.intent.key !== entry.key) {
        throw new CorruptEntryError(where(entry), `its key differs from the intent recorded for step ${entry.step}`, entry.step);
      }
      step[entry.phase] = entry;
      this.steps.set(entry.step, step);
      if (entry.step > this.last) this.last = entry.step;
      if (entry.phase === 'result') this.finished++;
    }
    // Only in the group of calls the run's last answer runs at once may a step be missing, or be
    // started and not finished, before a later one: they finish in any order.
    const batch = openBatch(run, this.steps, this.last, where);
    for (let position = after + 1; position <= this.last; position++) {
      const step = this.steps.get(position);
      const inBatch = batch !== undefined && position >= batch[0];
      if (!step && inBatch) continue;
      if (!step)
        throw new CorruptEntryError(
          `runs/${run}/steps`,
          `step ${position} is missing (the journal has steps up to ${this.last})`,
          position,
        );
      if (!step.result && position !== this.last && !inBatch) {
        throw new CorruptEntryError(
          where(step.intent!),
          `step ${position} was started but never finished, yet later steps exist`,
          position,
        );
      }
    }
    if (!tally) {
      tally = new EntryTotals();
      for (const entry of entries) tally.add(parsed(entry));
    }
    this.tally = tally;
  }

  /** The run's last position (0 for a run with no entry). */
  get lastPosition(): number {
    return this.last;
  }

  /** How many positions hold a finished result. */
  get finishedCount(): number {
    return this.finished;
  }

  /** The run's totals (for run.json), with `next` counted too when given: an entry about to be written. */
  totals(next?: JournalEntry): RunTotals {
    return this.tally.totals(next);
  }

  /** What the run's totals add up to so far, as JSON (a snapshot keeps it). */
  totalsState(): EntryTotalsState {
    return this.tally.state();
  }

  /** The checkpoint the run recorded last, the step that recorded it and when that finished. */
  get lastCheckpoint(): LastCheckpoint | undefined {
    return this.tally.lastCheckpoint;
  }

  /** Every checkpoint the run recorded, in order (each where it changed), and whether a person's step recorded it. */
  get checkpoints(): readonly CheckpointMark[] {
    return this.tally.checkpoints;
  }

  /** Whether the run's last step was started and not finished (a crash in it, or one running). */
  get inFlight(): boolean {
    return this.tally.totals().inFlight;
  }

  /**
   * The entries of the steps still held (not yet handed back by replay, or an intent not yet
   * finished), in journal order; only those of `kind` when given (the others are not parsed).
   * Those read for replay are parsed from their bytes at each call, without their result.
   */
  entries(kind?: string): JournalEntry[] {
    const listed: JournalEntry[] = [];
    for (const position of [...this.steps.keys()].sort((a, b) => a - b)) {
      const step = this.steps.get(position)!;
      for (const held of [step.intent, step.result]) {
        if (held && (kind === undefined || held.kind === kind)) listed.push(isKept(held) ? withoutResult(expandKept(held)) : held);
      }
    }
    return listed;
  }

  /** The kind of the step recorded at `position` and not yet handed back (undefined when there is none): the loop asks before a step only some runs record (a hook's). */
  kindAt(position: number): string | undefined {
    const step = this.steps.get(position);
    return (step?.result ?? step?.intent)?.kind;
  }

  /**
   * The record at the call's position, after checking it is the same step; a different kind or
   * key means the loop no longer asks what it asked before: a divergence, never a silent replay.
   */
  lookup(call: StepCall): RecordedStep | undefined {
    const step = this.steps.get(call.position);
    const held = step?.result ?? step?.intent;
    if (!held) return undefined;
    if (held.kind !== call.kind || held.key !== call.key) {
      const recorded = parsed(held);
      throw new DivergenceError(
        this.run,
        call.position,
        { kind: recorded.kind, key: recorded.key, description: recorded.description },
        { kind: call.kind, key: call.key, description: call.description },
        differences(recorded, call),
      );
    }
    if (isKept(held) && held.oid && !held.supplied) throw new Error(`step ${call.position}'s entry was not read again (History.unread)`);
    const entry = parsed(held);
    if (held === step!.intent) return { intent: entry };
    const intent = step!.intent;
    // The intent of a finished step is kept as its identity: parsed only if asked for.
    return intent
      ? {
          result: entry,
          get intent() {
            return parsed(intent);
          },
        }
      : { result: entry };
  }

  /**
   * Forgets the step at `position`, handed back by replay: positions only move on, so the loop
   * never asks for it again, and a long run's replay does not keep every output it handed back
   * (the loop keeps what it still needs). Its entries were counted when read.
   */
  handedBack(position: number): void {
    const held = this.steps.get(position)?.result;
    if (!held) return;
    // The bytes read again go at the next scavenge: held by an entry in the old generation (it
    // lived since the run was opened), they would otherwise stay until the next full collection.
    if (isKept(held)) held.supplied = undefined;
    this.steps.delete(position);
  }

  /** The blob of the entry a lookup at `position` would parse when its bytes were not kept (a big one, see KeptEntry), to be read and `supply`'d first. */
  unread(position: number): string | undefined {
    const step = this.steps.get(position);
    const held = step?.result ?? step?.intent;
    return held && isKept(held) && !held.supplied ? held.oid : undefined;
  }

  /** The bytes of the blob `unread` named, read again. */
  supply(position: number, bytes: Buffer): void {
    const step = this.steps.get(position);
    const held = step?.result ?? step?.intent;
    if (held && isKept(held)) supplyKept(held, bytes);
  }

  /**
   * Records an entry this process wrote. An intent is held (the step may be asked for again: a
   * retry after its function threw); a result is only counted, as is its step's intent: a live
   * run's memory stays flat.
   */
  add(entry: JournalEntry): void {
    this.tally.add(entry);
    if (entry.step > this.last) this.last = entry.step;
    if (entry.phase === 'intent') {
      this.steps.set(entry.step, { ...this.steps.get(entry.step), intent: entry });
      return;
    }
    this.finished++;
    this.steps.delete(entry.step);
  }
}

/**
 * The positions `[first, last]` of the group of one answer's calls that ran at the same time, when
 * the journal ends in it (its last step is one of them): a crash there leaves any of them finished
 * or not, in any order. Checked, so that a hole is only ever one explained by it: the step before
 * the group is the model answer that asked for the calls, and every step recorded from the group's
 * first position on names the same group. Undefined when the journal does not end in a group.
 */
function openBatch(
  run: string,
  steps: ReadonlyMap<number, HeldStep>,
  last: number,
  where: (entry: Held) => string,
): [number, number] | undefined {
  const lastStep = steps.get(last);
  const batch = (lastStep?.result ?? lastStep?.intent)?.batch;
  if (!batch) return undefined;
  const [first, end] = batch;
  const named = `steps ${first} to ${end}`;
  if (!(first <= last && last <= end))
    throw new CorruptEntryError(
      where((lastStep!.result ?? lastStep!.intent)!),
      `its batch (${named}) does not hold its own step ${last}`,
      last,
    );
  const answer = steps.get(first - 1)?.result;
  if (answer?.kind !== 'model') {
    throw new CorruptEntryError(
      `runs/${run}/steps`,
      `steps ${first} to ${last} ran at the same time (${named}), but step ${first - 1} is not the model answer that asked for them`,
      first - 1,
    );
  }
  for (let position = first; position <= last; position++) {
    const step = steps.get(position);
    for (const held of [step?.intent, step?.result]) {
      if (held && (held.batch?.[0] !== first || held.batch[1] !== end))
        throw new CorruptEntryError(
          where(held),
          `step ${position} lies among ${named}, which ran at the same time, but is not one of them`,
          position,
        );
    }
  }
  return batch;
}

// A held entry as an entry: kept ones parsed from their bytes.
function parsed(held: Held): JournalEntry {
  return isKept(held) ? expandKept(held) : held;
}

// Which part of the call differs from the recorded one, one phrase each: the kind, or each input
// field that differs (a model step's `request` is a digest of the whole request, so it is named
// as such, with what feeds it).
function differences(recorded: JournalEntry, call: StepCall): string[] {
  if (recorded.kind !== call.kind) return [`the journal holds a ${recorded.kind} step there, and the agent asked for a ${call.kind} step`];
  const before = asRecord(recorded.input);
  const now = asRecord(call.input);
  if (!before || !now) return [`its input is ${brief(call.input)}, not the recorded ${brief(recorded.input)}`];
  const fields = [...new Set([...Object.keys(before), ...Object.keys(now)])].sort();
  const found: string[] = [];
  for (const field of fields) {
    if (canonicalJson(before[field]) === canonicalJson(now[field])) continue;
    if (field === 'request' && recorded.kind === 'model') {
      found.push(
        `the request digest is ${brief(now[field])}, not the recorded ${brief(before[field])} (the system prompt, tool definitions, max tokens, thinking or the conversation so far differ)`,
      );
    } else if (field === 'model') {
      found.push(`the model is ${brief(now[field])}, not the recorded ${brief(before[field])}`);
    } else {
      found.push(`its input field "${field}" is ${brief(now[field])}, not the recorded ${brief(before[field])}`);
    }
  }
  return found;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function brief(value: unknown): string {
  return value === undefined ? '(absent)' : shortValue(JSON.stringify(value), 50);
}
