// What a run's journal says happened, position by position: the state replay works from. Pure
// code (STYLE: Temporal keeps replay free of I/O); the journal store feeds it entries.
import { CorruptEntryError, DivergenceError, type StepIdentity } from '../errors/index.js';
import type { JournalEntry } from '../journal/entry.js';

// The records at one position: the intent (if the step needed one) and the result (if it finished).
export interface RecordedStep {
  intent?: JournalEntry;
  result?: JournalEntry;
}

/** A step the loop asks for: its identity, at a position of the run. */
export interface StepCall extends StepIdentity {
  position: number;
}

export class History {
  private readonly steps = new Map<number, RecordedStep>();
  private readonly run: string;

  // Builds a run's history from its entries in journal order, checking that it is whole: positions
  // 1..n with no gap, and an unfinished intent only at the very end (where a crash leaves it).
  constructor(run: string, entries: readonly JournalEntry[], pathOf: (entry: JournalEntry) => string = () => `runs/${run}`) {
    this.run = run;
    for (const entry of entries) {
      const step = this.steps.get(entry.step) ?? {};
      if (step[entry.phase]) throw new CorruptEntryError(pathOf(entry), `step ${entry.step} has two ${entry.phase} entries`, entry.step);
      if (step.intent && step.intent.key !== entry.key) {
        throw new CorruptEntryError(pathOf(entry), `its key differs from the intent recorded for step ${entry.step}`, entry.step);
      }
      step[entry.phase] = entry;
      this.steps.set(entry.step, step);
    }
    const last = this.lastPosition;
    for (let position = 1; position <= last; position++) {
      const step = this.steps.get(position);
      if (!step) throw new CorruptEntryError(`runs/${run}/steps`, `step ${position} is missing (the journal has steps up to ${last})`, position);
      if (!step.result && position !== last) {
        throw new CorruptEntryError(pathOf(step.intent!), `step ${position} was started but never finished, yet later steps exist`, position);
      }
    }
  }

  get lastPosition(): number {
    return this.steps.size === 0 ? 0 : Math.max(...this.steps.keys());
  }

  // How many positions hold a finished result.
  get finishedCount(): number {
    let count = 0;
    for (const step of this.steps.values()) if (step.result) count++;
    return count;
  }

  entries(): JournalEntry[] {
    return [...this.steps.keys()].sort((a, b) => a - b).flatMap((p) => {
      const step = this.steps.get(p)!;
      return [step.intent, step.result].filter((e): e is JournalEntry => e !== undefined);
    });
  }

  // The record at the call's position, after checking it is the same step; a different kind or
  // key means the loop no longer asks what it asked before: a divergence, never a silent replay.
  lookup(call: StepCall): RecordedStep | undefined {
    const step = this.steps.get(call.position);
    const recorded = step?.result ?? step?.intent;
    if (!recorded) return undefined;
    if (recorded.kind !== call.kind || recorded.key !== call.key) {
      throw new DivergenceError(
        this.run,
        call.position,
        { kind: recorded.kind, key: recorded.key, description: recorded.description },
        { kind: call.kind, key: call.key, description: call.description },
      );
    }
    return step;
  }

  add(entry: JournalEntry): void {
    const step = this.steps.get(entry.step) ?? {};
    step[entry.phase] = entry;
    this.steps.set(entry.step, step);
  }
}
