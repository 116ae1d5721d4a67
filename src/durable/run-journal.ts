// The valve: every side effect of a run goes through `step`, which hands back the recorded result
// when the journal has one and otherwise runs the effect live and records it before returning.
// The caller's loop cannot tell which happened, and must not need to: that is what makes replay
// exact. Open one with `openJournal`; one process at a time may hold a run open.
import { hostname } from 'node:os';
import { UsageError } from '../errors/index.js';
import { ENTRY_FORMAT, RUN_FORMAT, isValidKind, isValidRunId, serializeEntry, type EntryUsage, type JournalEntry, type RunRecord } from '../journal/entry.js';
import { runRecordPath, stepFilePath } from '../journal/layout.js';
import { readRunEntries, readRunRecord } from '../journal/reader.js';
import { readHeadCommit } from '../journal/head.js';
import { acquireRunLock, type RunLock } from '../journal/run-lock.js';
import { JournalStore, type JournalFile, type StoreOptions } from '../journal/store.js';
import { History, type StepCall } from './history.js';
import { countTotals } from './run-totals.js';
import { shortText, stepKey } from './key.js';

// What a caller may say about one step.
export interface StepOptions<T> {
  // The step is not safe to repeat (a command, an overwrite): record the intent before running it.
  // A function is asked only when the step goes live, so a replayed step never looks at the world.
  intent?: boolean | (() => boolean);
  // For people: `run_bash "npm test"`. Defaults to the kind and a short rendering of the input.
  describe?: string;
  // A one-line result for people: `exit 1: 1 failed`. Defaults to a short rendering of the result.
  summarize?: (result: T) => string;
  // Token usage to record with the result (model calls).
  usage?: (result: T) => EntryUsage | undefined;
  // Decides what to do with a step found started-but-unfinished (a crash mid-step). Without it the
  // step is run again.
  onInFlight?: (step: InFlightStep) => InFlightAnswer<T> | Promise<InFlightAnswer<T>>;
  // Called only when the step is about to run live, before its intent is recorded (approval):
  // it may throw to stop with nothing recorded, or return a result to record instead of running
  // (recorded with the resolution "declined").
  decline?: () => Promise<{ result: T; summary?: string } | undefined> | { result: T; summary?: string } | undefined;
  // The working-tree checkpoint to record after the step (a git tree id, and files left out of it).
  checkpoint?: (result: T) => Promise<Checkpoint | undefined> | Checkpoint | undefined;
}

// The working tree after a step, as a git tree, and the files deliberately left out of it.
export interface Checkpoint {
  tree: string;
  skipped?: Array<{ path: string; size: number; reason: string }>;
}

// A step that was started before a crash and has no recorded result.
export interface InFlightStep {
  run: string;
  position: number;
  kind: string;
  description: string;
  input: unknown;
  startedAt: string;
}

// Run the step again, or record this result for it instead (without running anything).
export type InFlightAnswer<T> = { rerun: true } | { result: T; summary?: string; resolution: string };

// What the valve tells a front end, as it happens.
export type StepEvent =
  | { type: 'replayed'; position: number; kind: string; description: string; summary: string; originalDurationMs: number; result: unknown }
  | { type: 'started'; position: number; kind: string; description: string }
  | { type: 'recorded'; position: number; kind: string; description: string; summary: string; durationMs: number; result: unknown; resolution?: string }
  | { type: 'in-flight'; position: number; kind: string; description: string; decision: 'rerun' | 'answered' };

export interface OpenJournalOptions {
  // A directory inside the repository the agent works in.
  dir: string;
  // The run's id (letters, digits, `.`, `_`, `-`).
  run: string;
  // Recorded in run.json when the run is created.
  task?: string;
  model?: string;
  lineage?: RunRecord['lineage'];
  // Called for every step as it replays, starts and finishes.
  onEvent?: (event: StepEvent) => void;
  // Rewrites every entry just before it is written (secret redaction). The valve then returns the
  // recorded (redacted) result, live or replayed, so both see exactly the same values.
  redact?: <V>(value: V) => V;
  // The user's HEAD commit when the run is created, recorded in run.json as its base (a fresh clone
  // of it is restored from the checkpoint automatically). Default: HEAD of the repository at `dir`.
  baseCommit?: string;
  // The working tree when the run is created, recorded in run.json (drift is measured from it
  // until the first step makes a checkpoint of its own). A function is called only for a new run.
  startCheckpoint?: string | (() => string | undefined | Promise<string | undefined>);
  store?: StoreOptions;
}

// Opens (or prepares to create) a run and takes its lock.
export async function openJournal(options: OpenJournalOptions): Promise<RunJournal> {
  if (!isValidRunId(options.run)) {
    throw new UsageError(`"${options.run}" is not a valid run id: use 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit.`);
  }
  const store = await JournalStore.open(options.dir, options.store);
  const lock = acquireRunLock(store.repo.commonDir, options.run);
  try {
    await store.refresh();
    const record = await readRunRecord(store, options.run);
    const entries = await readRunEntries(store, options.run);
    if (typeof options.startCheckpoint === 'function') {
      options = { ...options, startCheckpoint: !record && entries.length === 0 ? await options.startCheckpoint() : undefined };
    }
    return new RunJournal(store, lock, options, record, new History(options.run, entries, (e) => stepFilePath(options.run, e.step, e.kind, e.phase)));
  } catch (error) {
    lock.release();
    throw error;
  }
}

export class RunJournal {
  readonly run: string;
  readonly store: JournalStore;
  readonly history: History;
  private readonly lock: RunLock;
  private readonly options: OpenJournalOptions;
  private record: RunRecord | undefined;
  private position = 0;
  // Set once this process has written its first entry (and its attempt into run.json).
  private attempt: number | undefined;
  private readonly counts = { replayed: 0, live: 0 };

  constructor(store: JournalStore, lock: RunLock, options: OpenJournalOptions, record: RunRecord | undefined, history: History) {
    this.store = store;
    this.lock = lock;
    this.options = options;
    this.run = options.run;
    this.record = record;
    this.history = history;
  }

  // ── The heart ────────────────────────────────────────────────────────────────────────────────
  // Is there a recorded result for this step? Hand it back. Otherwise record the intent (for steps
  // not safe to repeat), run it, record the result, and only then return it.
  async step<T>(kind: string, input: unknown, run: () => T | Promise<T>, options: StepOptions<T> = {}): Promise<T> {
    const call = this.identify(kind, input, options.describe);
    try {
      const recorded = this.history.lookup(call); // a different step here than last time: DivergenceError
      if (recorded?.result) return this.replay<T>(call, recorded.result);
      if (recorded?.intent) {
        const answer = await this.resolveInFlight(call, input, recorded.intent, options);
        if ('result' in answer) return await this.recordResult(call, input, answer.result, Date.now(), options, answer);
      }
      const declined = await options.decline?.(); // only a live step asks (approval); a replayed one never does
      if (declined) return await this.recordResult(call, input, declined.result, Date.now(), options, { ...declined, resolution: 'declined' });
      const intent = typeof options.intent === 'function' ? options.intent() : options.intent;
      if (intent && !recorded?.intent) await this.write(this.entry(call, input, 'intent', new Date()), `${call.description} (started)`);
      this.emit({ type: 'started', ...callInfo(call) });
      const started = Date.now();
      const result = await run();
      return await this.recordResult(call, input, result, started, options);
    } catch (error) {
      // No result was recorded (the function or the journal write threw): give the position back,
      // unless a later step already claimed one, so the next step (a retry) takes it. Otherwise the
      // journal keeps a hole there, and the run can never be opened again ("step n is missing").
      if (this.position === call.position) this.position--;
      throw error;
    }
  }
  // ─────────────────────────────────────────────────────────────────────────────────────────────

  private identify(kind: string, input: unknown, describe: string | undefined): StepCall {
    if (!isValidKind(kind)) throw new UsageError(`"${kind}" is not a valid step kind: use letters, digits, "_" or "-".`);
    return { position: ++this.position, kind, key: stepKey(kind, input), description: describe ?? `${kind} ${shortText(input, 50)}` };
  }

  private replay<T>(call: StepCall, entry: JournalEntry): T {
    this.counts.replayed++;
    this.emit({
      type: 'replayed',
      ...callInfo(call),
      summary: entry.summary ?? '',
      originalDurationMs: entry.durationMs ?? 0,
      result: entry.result,
    });
    return entry.result as T;
  }

  private async resolveInFlight<T>(call: StepCall, input: unknown, intent: JournalEntry, options: StepOptions<T>): Promise<InFlightAnswer<T>> {
    const step: InFlightStep = { run: this.run, position: call.position, kind: call.kind, description: call.description, input, startedAt: intent.startedAt };
    const answer = options.onInFlight ? await options.onInFlight(step) : ({ rerun: true } as const);
    this.emit({ type: 'in-flight', ...callInfo(call), decision: 'result' in answer ? 'answered' : 'rerun' });
    return answer;
  }

  private async recordResult<T>(call: StepCall, input: unknown, result: T, started: number, options: StepOptions<T>, answer?: { summary?: string; resolution: string }): Promise<T> {
    const durationMs = Date.now() - started;
    const summary = answer?.summary ?? (options.summarize ? options.summarize(result) : shortText(result, 60));
    const entry: JournalEntry = {
      ...this.entry(call, input, 'result', new Date(started)),
      result,
      summary,
      ...(answer ? { resolution: answer.resolution } : {}),
      finishedAt: new Date().toISOString(),
      durationMs,
    };
    const usage = options.usage?.(result);
    if (usage) entry.usage = usage;
    const checkpoint = await options.checkpoint?.(result);
    if (checkpoint) entry.checkpoint = checkpoint.tree;
    if (checkpoint?.skipped?.length) entry.checkpointSkipped = checkpoint.skipped;
    const recorded = await this.write(entry, `${call.description} -> ${summary}`);
    this.counts.live++;
    this.emit({ type: 'recorded', ...callInfo(call), summary: recorded.summary ?? summary, durationMs, result: recorded.result, ...(answer ? { resolution: answer.resolution } : {}) });
    return recorded.result as T;
  }

  private entry(call: StepCall, input: unknown, phase: 'intent' | 'result', startedAt: Date): JournalEntry {
    return {
      format: ENTRY_FORMAT,
      run: this.run,
      step: call.position,
      kind: call.kind,
      phase,
      key: call.key,
      description: call.description,
      input,
      startedAt: startedAt.toISOString(),
      attempt: this.currentAttempt(),
    };
  }

  private currentAttempt(): number {
    return this.attempt ?? (this.record?.attempts.length ?? 0) + 1;
  }

  // Appends one entry as one commit; the first entry of this process also records its attempt.
  // Returns the entry as written (redacted).
  private async write(entry: JournalEntry, subject: string): Promise<JournalEntry> {
    const safe = this.options.redact ? this.options.redact(entry) : entry;
    const files: JournalFile[] = [{ path: stepFilePath(this.run, entry.step, entry.kind, entry.phase), content: serializeEntry(safe) }];
    let record: RunRecord | undefined;
    if (this.attempt === undefined) {
      this.attempt = this.currentAttempt();
      record = this.nextRecord({ status: 'running', totals: countTotals([...this.history.entries(), safe]) }, entry.step);
      // run.json holds the task, which may quote a secret: it is redacted like every entry.
      record = this.options.redact ? this.options.redact(record) : record;
      files.push({ path: runRecordPath(this.run), content: serializeEntry(record) });
    }
    const worktree = safe.checkpoint ?? (record && !this.record ? record.startCheckpoint : undefined);
    if (worktree) files.push({ path: `runs/${this.run}/worktree`, tree: worktree });
    const message = this.options.redact ? this.options.redact(subject) : subject;
    try {
      await this.store.append(files, `${this.run} #${entry.step} ${oneLine(message)}`);
    } catch (error) {
      // Not written: the next write must carry run.json (and this attempt) again, or a new run
      // whose first append failed would never get its run.json.
      if (record) this.attempt = undefined;
      throw error;
    }
    if (record) this.record = record;
    this.history.add(safe);
    return safe;
  }

  private nextRecord(change: Partial<RunRecord>, firstLiveStep?: number): RunRecord {
    const now = new Date().toISOString();
    const base: RunRecord = this.record ?? {
      format: RUN_FORMAT,
      id: this.run,
      task: this.options.task ?? '',
      model: this.options.model,
      baseCommit: 'baseCommit' in this.options ? this.options.baseCommit : readHeadCommit(this.store.repo),
      createdAt: now,
      updatedAt: now,
      status: 'running',
      lineage: this.options.lineage ?? null,
      ...(typeof this.options.startCheckpoint === 'string' ? { startCheckpoint: this.options.startCheckpoint } : {}),
      attempts: [],
    };
    const attempts =
      firstLiveStep === undefined
        ? base.attempts
        : [...base.attempts, { number: this.attempt!, startedAt: now, host: hostname(), pid: process.pid, firstLiveStep }];
    return { ...base, ...change, attempts, updatedAt: now };
  }

  // Marks the run finished (with its final answer) or failed. Writes nothing when the journal
  // already says so (replaying a finished run leaves the branch untouched).
  async finish(status: 'finished' | 'failed', details: { final?: string; error?: string } = {}): Promise<void> {
    if (this.record && this.record.status === status && this.record.final === details.final && this.attempt === undefined) return;
    if (!this.record && this.attempt === undefined && this.history.lastPosition === 0 && status === 'failed') return;
    const record = this.nextRecord({ status, ...details, totals: countTotals(this.history.entries()) });
    const safe = this.options.redact ? this.options.redact(record) : record;
    const what = status === 'finished' ? `finished: ${shortText(details.final ?? '', 60)}` : `failed: ${shortText(details.error ?? '', 60)}`;
    await this.store.append([{ path: runRecordPath(this.run), content: serializeEntry(safe) }], `${this.run} ${oneLine(what)}`);
    this.record = safe;
  }

  // The run's metadata as last read or written (undefined for a run not yet written).
  get runRecord(): RunRecord | undefined {
    return this.record;
  }

  // How many steps this process replayed and ran live so far.
  get stats(): { replayed: number; live: number } {
    return { ...this.counts };
  }

  // Releases the run lock. The journal needs no other closing: every step is already on disk.
  close(): void {
    this.lock.release();
  }

  private emit(event: StepEvent): void {
    this.options.onEvent?.(event);
  }
}

function callInfo(call: StepCall) {
  return { position: call.position, kind: call.kind, description: call.description };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
