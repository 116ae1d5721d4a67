// The valve: every side effect of a run goes through `step`, which hands back the recorded result
// when the journal has one and otherwise runs the effect live and records it before returning.
// The caller's loop cannot tell which happened, and must not need to: that is what makes replay
// exact. Open one with `openJournal` (open-journal.ts); one process at a time may hold a run open.
import { InFlightError, UsageError } from '../errors/index.js';
import { oneLine, shortValue } from '../format/text.js';
import { ENTRY_FORMAT, isValidKind, serializeEntry, type AttemptEnd, type JournalEntry, type RunConfig, type RunRecord } from '../journal/entry.js';
import { runRecordPath, stepFilePath } from '../journal/layout.js';
import { clearLiveCommand, recordLiveCommand } from '../locks/live-commands.js';
import { holdPendingTree, releasePendingTree } from '../journal/pending.js';
import type { RunLock } from '../locks/run-lock.js';
import { appendedCommitOf, type JournalFile, type JournalStore } from '../journal/store.js';
import type { History, StepCall } from './history.js';
import { stepKey } from './key.js';
import { newRunRecord, nextRunRecord } from './run-record.js';
import type { InFlightAnswer, InFlightStep, OpenJournalOptions, StepEvent, StepOptions } from './step-types.js';

export type { Checkpoint, InFlightAnswer, InFlightStep, OpenJournalOptions, StepEvent, StepOptions } from './step-types.js';

/** One run's journal, held open by this process: `step` is the valve. */
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
  // The last position this process recorded a result at.
  private lastResult = 0;

  constructor(store: JournalStore, lock: RunLock, options: OpenJournalOptions, record: RunRecord | undefined, history: History) {
    this.store = store;
    this.lock = lock;
    this.options = options;
    this.run = options.run;
    this.record = record;
    this.history = history;
  }

  /**
   * ── The heart ────────────────────────────────────────────────────────────────────────────────
   * Is there a recorded result for this step? Hand it back. Otherwise record the intent (for steps
   * not safe to repeat), run it, record the result, and only then return it.
   */
  async step<T>(kind: string, input: unknown, run: () => T | Promise<T>, options: StepOptions<T> = {}): Promise<T> {
    const call = this.identify(kind, input, options.describe);
    try {
      const unread = this.history.unread(call.position); // a big entry: read again only now
      if (unread) this.history.supply(call.position, await this.store.objects.read(unread, 'blob'));
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
      // A throw after the result landed (a push hook, an event handler) keeps it: the step is recorded.
      if (this.position === call.position && this.lastResult !== call.position) this.position--;
      throw error;
    }
  }
  // ─────────────────────────────────────────────────────────────────────────────────────────────

  private identify(kind: string, input: unknown, describe: string | undefined): StepCall {
    if (!isValidKind(kind)) throw new UsageError(`"${kind}" is not a valid step kind: use letters, digits, "_" or "-".`);
    return { position: ++this.position, kind, key: stepKey(kind, input), description: describe ?? `${kind} ${shortValue(input, 50)}`, input };
  }

  private replay<T>(call: StepCall, entry: JournalEntry): T {
    const result = entry.result as T;
    this.counts.replayed++;
    this.emit({ type: 'replayed', ...callInfo(call), summary: entry.summary ?? '', originalDurationMs: entry.durationMs ?? 0, result });
    this.history.handedBack(call.position);
    return result;
  }

  private async resolveInFlight<T>(call: StepCall, input: unknown, intent: JournalEntry, options: StepOptions<T>): Promise<InFlightAnswer<T>> {
    const interrupted = this.record?.attempts.some((a) => a.number === intent.attempt && a.interruptedAt) ?? false;
    const step: InFlightStep = { run: this.run, position: call.position, kind: call.kind, description: call.description, input, startedAt: intent.startedAt, interrupted };
    // A one-shot step is never repeated on nobody's say-so (the mail must not go out twice).
    if (!options.onInFlight) throw new InFlightError(this.run, call.position, call.description, true);
    const answer = await options.onInFlight(step);
    this.emit({ type: 'in-flight', ...callInfo(call), decision: 'result' in answer ? 'answered' : 'rerun', interrupted });
    return answer;
  }

  private async recordResult<T>(call: StepCall, input: unknown, result: T, started: number, options: StepOptions<T>, answer?: { summary?: string; resolution: string }): Promise<T> {
    const durationMs = Date.now() - started;
    const summary = answer?.summary ?? (options.summarize ? options.summarize(result) : shortValue(result, 60));
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
    this.lock.check(); // never append beside a process that took the run over
    const safe = this.options.redact ? this.options.redact(entry) : entry;
    const files: JournalFile[] = [{ path: stepFilePath(this.run, entry.step, entry.kind, entry.phase), content: serializeEntry(safe) }];
    let record: RunRecord | undefined;
    if (this.attempt === undefined) {
      this.attempt = this.currentAttempt();
      record = this.nextRecord({ status: 'running', totals: this.history.totals(safe) }, entry.step);
      // run.json holds the task, which may quote a secret: it is redacted like every entry.
      record = this.options.redact ? this.options.redact(record) : record;
      files.push({ path: runRecordPath(this.run), content: serializeEntry(record) });
    }
    const worktree = safe.checkpoint ?? (record && !this.record ? record.startCheckpoint : undefined);
    if (worktree) files.push({ path: `runs/${this.run}/worktree`, tree: worktree });
    const message = this.options.redact ? this.options.redact(subject) : subject;
    let pushError: unknown;
    try {
      await this.store.append(files, `${this.run} #${entry.step} ${oneLine(message, 200)}`);
    } catch (error) {
      // Not written: the next write must carry run.json (and this attempt) again, or a new run
      // whose first append failed would never get its run.json.
      if (!appendedCommitOf(error)) {
        if (record) this.attempt = undefined;
        throw error;
      }
      pushError = error; // written, then the push failed: recorded like any entry, then thrown
    }
    if (record) this.record = record;
    this.history.add(safe); // a result only counted: never looked up again (positions only move on)
    if (safe.phase === 'result') this.lastResult = safe.step;
    if (worktree) await releasePendingTree(this.store.repo.commonDir, this.run); // the journal holds a checkpoint now
    if (pushError !== undefined) throw pushError;
    return safe;
  }

  private nextRecord(change: Partial<RunRecord>, firstLiveStep?: number): RunRecord {
    const now = new Date().toISOString();
    const base = this.record ?? newRunRecord(this.run, this.options, this.store.repo, now);
    const attempt = firstLiveStep === undefined ? undefined : { number: this.attempt!, firstLiveStep, worktree: this.store.repo.root };
    return nextRunRecord(base, change, now, attempt, attempt && this.options.sandbox?.(), this.options.config as RunConfig | undefined);
  }

  /**
   * Marks the run finished (with its final answer) or failed. Writes nothing when the journal
   * already says so (replaying a finished run leaves the branch untouched).
   */
  async finish(status: 'finished' | 'failed', details: { final?: string; error?: string } = {}): Promise<void> {
    if (this.record && this.record.status === status && this.record.final === details.final && this.attempt === undefined) return;
    if (!this.record && this.attempt === undefined && this.history.lastPosition === 0 && status === 'failed') return;
    const at = new Date().toISOString();
    const end: AttemptEnd = status === 'finished' ? { how: 'finished', at } : { how: 'failed', at, ...(details.error !== undefined ? { error: details.error } : {}) };
    const record = this.nextRecord({ status, ...details, totals: this.history.totals() });
    record.attempts = this.endAttempt(record.attempts, end);
    // A success clears an earlier attempt's error from the run's status; that attempt keeps it.
    if (status === 'finished') delete record.error;
    const safe = this.options.redact ? this.options.redact(record) : record;
    const what = status === 'finished' ? `finished: ${shortValue(details.final ?? '', 60)}` : `failed: ${shortValue(details.error ?? '', 60)}`;
    this.lock.check();
    try {
      await this.store.append([{ path: runRecordPath(this.run), content: serializeEntry(safe) }], `${this.run} ${oneLine(what, 200)}`);
    } catch (error) {
      if (appendedCommitOf(error)) this.record = safe; // recorded; only the push failed
      throw error;
    }
    this.record = safe;
    await releasePendingTree(this.store.repo.commonDir, this.run); // nothing more will reuse it
  }

  /** Records, on this machine only, a process group the current step started (see live-commands.ts). */
  trackCommand(pgid: number, description: string): void {
    recordLiveCommand(this.store.repo.commonDir, this.run, pgid, this.position, description);
  }

  /** Forgets a process group of `trackCommand` once it has ended. */
  untrackCommand(pgid: number): void {
    clearLiveCommand(this.store.repo.commonDir, this.run, pgid);
  }

  /**
   * Keeps `tree`, a working-tree snapshot written but not recorded (the one a resume measures drift
   * with), safe from `git gc --prune=now` until the next step's checkpoint lands: later checkpoints
   * reuse its objects.
   */
  async keepReachable(tree: string): Promise<void> {
    await holdPendingTree(this.store.repo.commonDir, this.run, tree);
  }

  /**
   * Notes in run.json that this process's attempt was stopped (Ctrl-C, SIGTERM, SIGHUP: `by` says), so the next one says the
   * run was interrupted rather than that it crashed. Nothing to note when it wrote nothing.
   */
  async markInterrupted(by = 'a signal'): Promise<void> {
    const at = new Date().toISOString();
    await this.noteInRecord(`interrupted (${by})`, (attempts) => this.endAttempt(attempts, { how: 'interrupted', at }).map((a) => (a.number === this.attempt ? { ...a, interruptedAt: at } : a)));
  }

  /**
   * Notes in run.json the totals of a run stopped at one of its limits (`--max-steps` and the
   * like), unfinished: else `savepoint runs` could not trust them and would read every entry.
   */
  async markStopped(limit: string): Promise<void> {
    await this.noteInRecord(`stopped at its ${limit} limit`, (attempts) => this.endAttempt(attempts, { how: 'limit', at: new Date().toISOString(), limit }));
  }

  // `attempts` with this process's attempt saying how it ended (none to change when it wrote nothing).
  private endAttempt(attempts: RunRecord['attempts'], end: AttemptEnd): RunRecord['attempts'] {
    return attempts.map((a) => (a.number === this.attempt ? { ...a, end } : a));
  }

  // run.json again, with the totals as they are now (and each attempt changed by `attempt`, when
  // given); nothing when this process wrote nothing.
  private async noteInRecord(what: string, change?: (attempts: RunRecord['attempts']) => RunRecord['attempts']): Promise<void> {
    if (this.attempt === undefined || !this.record) return;
    const attempts = change ? change(this.record.attempts) : this.record.attempts;
    const record: RunRecord = { ...this.record, attempts, updatedAt: new Date().toISOString(), totals: this.history.totals() };
    this.lock.check();
    await this.store.append([{ path: runRecordPath(this.run), content: serializeEntry(record) }], `${this.run} ${what} in attempt ${this.attempt}`);
    this.record = record;
  }

  /** The run's metadata as last read or written (undefined for a run not yet written). */
  get runRecord(): RunRecord | undefined {
    return this.record;
  }

  /** The configuration the run uses: the one run.json recorded, else the one it will record. */
  get config(): RunConfig | undefined {
    return this.record?.config ?? (this.options.config as RunConfig | undefined);
  }

  /** How many steps this process replayed and ran live so far. */
  get stats(): { replayed: number; live: number } {
    return { ...this.counts };
  }

  /** Releases the run lock. The journal needs no other closing: every step is already on disk. */
  close(): void {
    this.lock.release();
  }

  private emit(event: StepEvent): void {
    this.options.onEvent?.(event);
  }
}

const callInfo = (call: StepCall) => ({ position: call.position, kind: call.kind, description: call.description });

