// The valve: every side effect of a run goes through `step`, which hands back the recorded result
// when the journal has one and otherwise runs the effect live and records it before returning.
// The caller's loop cannot tell which happened, and must not need to: that is what makes replay
// exact. Open one with `openJournal` (open-journal.ts); one process at a time may hold a run open.
import { InFlightError, UnfinishedBatchError, UsageError } from '../errors/index.js';
import { oneLine, shortValue } from '../format/text.js';
import { ENTRY_FORMAT, isValidKind, serializeEntry, type JournalEntry, type RunConfig, type RunRecord } from '../journal/entry.js';
import { runBlobPath, stepFilePath } from '../journal/layout.js';
import {
  configDigest,
  SNAPSHOT_AFTER_COMPACTION,
  SNAPSHOT_EVERY,
  SNAPSHOT_FORMAT,
  snapshotPath,
  type LoopState,
  type RunSnapshot,
} from './snapshot.js';
import { hashObject } from '../git/git-object.js';
import type { RunLock } from '../locks/run-lock.js';
import { appendedCommitOf, type JournalFile, type JournalStore } from '../journal/store.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import { RunCommands } from '../journal/run-commands.js';
import type { History, StepCall } from './history.js';
import { stepKey } from './key.js';
import { RunRecordWriter, type RunOrigin } from './run-record.js';
import {
  assertStepOptions,
  type Checkpoint,
  type InFlightAnswer,
  type InFlightStep,
  type OpenJournalOptions,
  type StepBatch,
  type StepEvent,
  type StepOptions,
} from './step-types.js';

export type {
  Checkpoint,
  Checkpointer,
  InFlightAnswer,
  InFlightStep,
  JournalHooks,
  OpenJournalOptions,
  StepBatch,
  StepChanges,
  StepEvent,
  StepOptions,
} from './step-types.js';

/** A run's latest result entry: its step, kind and blob id (what a snapshot after it names). */
export interface ResultEntry {
  step: number;
  kind: string;
  oid: string;
}

/** One run's journal, held open by this process: `step` is the valve. `Store`: its storage (git, or in memory). */
export class RunJournal<Store extends JournalStorage = JournalStore> {
  readonly run: string;
  readonly store: Store;
  readonly history: History;
  private readonly lock: RunLock;
  /** The process groups this run's commands run in, tracked while they run (journal/run-commands.ts). */
  readonly commands: RunCommands;
  private readonly options: Omit<OpenJournalOptions, 'dir'>;
  /** run.json: what the run as a whole says about itself, and its life cycle (run-record.ts). */
  readonly record: RunRecordWriter;
  private claimed = 0; // the last position a step took (see position)
  private readonly counts = { replayed: 0, live: 0 };
  // The positions this process claimed and has no result for yet (steps running, a batch's reads
  // at once), and those whose step threw with none: see giveBack.
  private readonly unfinished = new Set<number>();
  private readonly thrown = new Set<number>();
  // This process's appends, one after another (see serially).
  private writing: Promise<unknown> = Promise.resolve();
  // Snapshots (snapshot.ts): the state the loop starts from (the run was opened from one), the
  // step of the last one written or read, the loop's latest offer, and the last result entry
  // recorded (the one a snapshot taken now names).
  private readonly startState: LoopState | undefined;
  private snapshotStep = 0;
  private offer: { position: number; state: () => LoopState } | undefined;
  private lastResult: ResultEntry | undefined;

  /**
   * `start`: what opening read of the run's snapshot and last entry (open-journal.ts): a run opened
   * from its snapshot begins at the snapshot's step, its loop at the snapshot's state.
   */
  constructor(
    store: Store,
    lock: RunLock,
    options: Omit<OpenJournalOptions, 'dir'>,
    record: RunRecord | undefined,
    history: History,
    origin: RunOrigin,
    start: { snapshot?: RunSnapshot; lastResult?: ResultEntry } = {},
  ) {
    this.store = store;
    this.lock = lock;
    this.options = options;
    this.run = options.run;
    this.history = history;
    this.record = new RunRecordWriter({ run: options.run, store, options, origin, history, checkOwner: lock.check }, record);
    // Taken over while paused: a command this process still runs is stopped, as the new owner may not reach it.
    this.commands = new RunCommands(store.local, options.run, lock, () => this.claimed);
    const killed = this.record.killedAttempt;
    if (killed) this.record.noteKilled(killed.number);
    this.lastResult = start.lastResult;
    if (start.snapshot) {
      this.claimed = this.snapshotStep = start.snapshot.step;
      this.startState = start.snapshot.loop;
    }
  }

  /**
   * The state savepoint's agent loop starts from, when the run was opened from its snapshot (the
   * steps up to `resumedFrom` are not replayed, their entries not read); undefined: from step 1.
   */
  get resumeState(): LoopState | undefined {
    return this.startState;
  }

  /**
   * The run's step counter: the last position a step took (a step under way included), from the
   * snapshot's step when the run was opened from one. The loop's step limit reads it (agent/budget.ts).
   */
  get position(): number {
    return this.claimed;
  }

  /** The step the run was opened from (its snapshot's), 0 when every entry was read. */
  get resumedFrom(): number {
    return this.startState ? this.startState.budget.steps : 0;
  }

  /**
   * The loop's state just before its next model call, offered for a snapshot (agent/loop.ts; `soon`
   * after a compaction, when the conversation is at its smallest). Taken only when the run is live
   * here (no recorded step follows), no step is under way, and SNAPSHOT_EVERY steps went by since
   * the last one (SNAPSHOT_AFTER_COMPACTION when `soon`): it is then written with the next step's
   * entry, in the same commit.
   */
  offerSnapshot(state: () => LoopState, soon = false): void {
    const position = this.claimed;
    this.offer = undefined;
    if (position === 0 || position < this.history.lastPosition || this.unfinished.size > 0 || this.thrown.size > 0) return;
    if (this.lastResult?.step !== position) return;
    if (position - this.snapshotStep < (soon ? SNAPSHOT_AFTER_COMPACTION : SNAPSHOT_EVERY)) return;
    this.offer = { position, state };
  }

  /**
   * ── The heart ────────────────────────────────────────────────────────────────────────────────
   * Is there a recorded result for this step? Hand it back. Otherwise record the intent (for steps
   * not safe to repeat), run it, record the result, and only then return it. `run` is told the
   * step's position.
   */
  async step<T>(kind: string, input: unknown, run: (position: number) => T | Promise<T>, options: StepOptions<T> = {}): Promise<T> {
    assertStepOptions(options);
    const call = this.identify(kind, input, options.describe, options.batch);
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
      if (declined)
        return await this.recordResult(call, input, declined.result, Date.now(), options, { ...declined, resolution: 'declined' });
      if (!recorded?.intent) await this.recordIntent(call, input, options); // a step not safe to repeat
      this.emit({ type: 'started', ...callInfo(call) });
      const started = Date.now();
      const result = await run(call.position);
      return await this.recordResult(call, input, result, started, options);
    } catch (error) {
      // No result was recorded (the function or the journal write threw): give the position back,
      // so the next step (a retry) takes it and the journal keeps no hole (see giveBack). A throw
      // after the result landed (a push hook, an event handler) keeps it: the step is recorded.
      this.giveBack(call.position);
      throw error;
    }
  }
  // ─────────────────────────────────────────────────────────────────────────────────────────────

  // The intent of a step not safe to repeat, recorded before it runs. A fenced one (a one-shot effect
  // another machine must see as started) waits until everything before it is pushed (a remote that
  // cannot be reached stops the run here, with nothing written), then until its intent is (--push;
  // see journal/pusher.ts).
  private async recordIntent<T>(call: StepCall, input: unknown, options: StepOptions<T>): Promise<void> {
    const fence = typeof options.fence === 'function' ? options.fence() : options.fence;
    const intent = fence || (typeof options.intent === 'function' ? options.intent() : options.intent);
    if (!intent) return this.lock.check(); // no append just now: a run taken over meanwhile stops here, before its effect
    if (fence) await this.store.settle(call.description);
    await this.write(this.entry(call, input, 'intent', new Date()), `${call.description} (started)`, fence ? call.description : undefined);
  }

  // The step's position: the next one, claimed now (synchronously, so the steps of a batch take
  // theirs in the order they are asked for). None after a hole this process could not give back.
  private identify(kind: string, input: unknown, describe: string | undefined, batch: StepBatch | undefined): StepCall {
    if (!isValidKind(kind)) throw new UsageError(`"${kind}" is not a valid step kind: use letters, digits, "_" or "-".`);
    const [hole] = this.thrown;
    if (hole !== undefined) throw new UnfinishedBatchError(this.run, hole);
    const position = ++this.claimed;
    if (this.offer && this.offer.position !== position - 1) this.offer = undefined;
    const first = batch ? (batch.first ??= position) : position;
    if (batch && position >= first + batch.size)
      throw new UsageError(
        `step ${position} is not one of the batch of ${batch.size} steps from ${first}: another step was asked for among them`,
      );
    this.unfinished.add(position);
    const call: StepCall = {
      position,
      kind,
      key: stepKey(kind, input),
      description: describe ?? `${kind} ${shortValue(input, 50)}`,
      input,
    };
    return batch ? { ...call, batch: [first, first + batch.size - 1] } : call;
  }

  // A step threw with no result recorded: its position goes back to the next step, with those of
  // the steps after it that threw too (a batch's). One below a step that was recorded cannot: it
  // stays a hole of its batch, which only opening the run again fills (History allows it there),
  // and this process asks for no step after it (identify), which would leave the hole mid-journal.
  private giveBack(position: number): void {
    if (!this.unfinished.delete(position)) return; // its result landed: the step is recorded
    this.thrown.add(position);
    while (this.thrown.delete(this.claimed)) this.claimed--;
  }

  // Runs this process's appends one after another: the steps of a batch finish at the same time,
  // and this attempt's first write (run.json) must go with exactly one of them, the first to land.
  private serially<R>(append: () => Promise<R>): Promise<R> {
    const turn = this.writing.then(append);
    this.writing = turn.catch(() => undefined);
    return turn;
  }

  private replay<T>(call: StepCall, entry: JournalEntry): T {
    const result = entry.result as T;
    this.counts.replayed++;
    this.emit({
      type: 'replayed',
      ...callInfo(call),
      summary: entry.summary ?? '',
      originalDurationMs: entry.durationMs ?? 0,
      result,
      ...(entry.resolution ? { resolution: entry.resolution } : {}),
    });
    this.history.handedBack(call.position);
    this.unfinished.delete(call.position);
    return result;
  }

  private async resolveInFlight<T>(
    call: StepCall,
    input: unknown,
    intent: JournalEntry,
    options: StepOptions<T>,
  ): Promise<InFlightAnswer<T>> {
    const interrupted = this.record.current?.attempts.some((a) => a.number === intent.attempt && a.interruptedAt) ?? false;
    const step: InFlightStep = {
      run: this.run,
      position: call.position,
      kind: call.kind,
      description: call.description,
      input,
      startedAt: intent.startedAt,
      interrupted,
    };
    // A one-shot step is never repeated on nobody's say-so (the mail must not go out twice).
    if (!options.onInFlight) throw new InFlightError(this.run, call.position, call.description, true);
    const answer = await options.onInFlight(step);
    this.emit({ type: 'in-flight', ...callInfo(call), decision: 'result' in answer ? 'answered' : 'rerun', interrupted });
    if (!('result' in answer)) await this.noteRerun(call); // its intent is recorded already: nothing else would say this attempt began
    return answer;
  }

  private async recordResult<T>(
    call: StepCall,
    input: unknown,
    result: T,
    started: number,
    options: StepOptions<T>,
    answer?: { summary?: string; resolution: string },
  ): Promise<T> {
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
    const checkpoint = await this.checkpointAfter(options, result);
    if (checkpoint) entry.checkpoint = checkpoint.tree;
    if (checkpoint?.skipped?.length) entry.checkpointSkipped = checkpoint.skipped;
    const blobs = answer ? [] : (options.blobs?.(result) ?? []);
    const recorded = await this.write(entry, `${call.description} -> ${summary}`, undefined, blobs);
    this.counts.live++;
    this.emit({
      type: 'recorded',
      ...callInfo(call),
      summary: recorded.summary ?? summary,
      durationMs,
      result: recorded.result,
      ...(answer ? { resolution: answer.resolution } : {}),
    });
    return recorded.result as T;
  }

  // The step's checkpoint: its own function's, or the run's checkpointer's (of the files the step
  // was handed down with, when its caller named them while it was live).
  private checkpointAfter<T>(options: StepOptions<T>, result: T): Promise<Checkpoint | undefined> | Checkpoint | undefined {
    if (typeof options.checkpoint === 'function') return options.checkpoint(result);
    if (!options.checkpoint || !this.options.checkpointer) return undefined;
    return this.options.checkpointer.take(options.changed?.paths);
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
      attempt: this.record.attemptNumber,
      ...(call.batch ? { batch: call.batch } : {}),
    };
  }

  // Appends one entry as one commit; the first entry of this process also records its attempt.
  // Returns the entry as written (redacted).
  // Before a step left in flight runs again: this attempt in run.json (who, when, which step), so
  // that a kill before its result leaves a trace. Nothing when this process has written already.
  private noteRerun(call: StepCall): Promise<void> {
    return this.serially(() => this.noteRerunNow(call));
  }

  private async noteRerunNow(call: StepCall): Promise<void> {
    this.lock.check();
    const first = this.record.firstWrite(call.position, this.history.totals(), call.position);
    if (!first) return;
    try {
      await this.store.append(
        [first.file],
        `${this.run} #${call.position} ${oneLine(call.description, 120)} (running again: in flight at a crash)`,
        this.lock.check,
      );
    } catch (error) {
      if (!appendedCommitOf(error)) {
        this.record.abandon();
        throw error;
      }
      this.record.commit(first.record);
      throw error; // written, then the push failed
    }
    this.record.commit(first.record);
  }

  private write(entry: JournalEntry, subject: string, fence?: string, blobs: Buffer[] = []): Promise<JournalEntry> {
    return this.serially(() => this.writeNow(entry, subject, fence, blobs));
  }

  private async writeNow(entry: JournalEntry, subject: string, fence?: string, blobs: Buffer[] = []): Promise<JournalEntry> {
    this.lock.check(); // never append beside a process that took the run over
    const safe = this.options.redact ? this.options.redact(entry) : entry;
    const content = serializeEntry(safe);
    const files: JournalFile[] = [{ path: stepFilePath(this.run, entry.step, entry.kind, entry.phase), content }];
    for (const bytes of blobs) files.push({ path: runBlobPath(this.run, hashObject('blob', bytes)), content: bytes });
    const snapshot = this.takeOffer(entry.step);
    if (snapshot) files.push({ path: snapshotPath(this.run), content: snapshot.content });
    const wasNew = this.record.isNew;
    // The first step this attempt runs live: of a batch, the lowest still running may land after this one.
    const first = this.record.firstWrite(Math.min(entry.step, ...this.unfinished), this.history.totals(safe));
    if (first) files.push(first.file);
    const worktree = safe.checkpoint ?? (first && wasNew ? first.record.startCheckpoint : undefined);
    if (worktree) files.push({ path: `runs/${this.run}/worktree`, tree: worktree });
    const message = this.options.redact ? this.options.redact(subject) : subject;
    let pushError: unknown;
    try {
      await this.store.append(files, `${this.run} #${entry.step} ${oneLine(message, 200)}`, this.lock.check, fence);
    } catch (error) {
      // Not written: the next write must carry run.json (and this attempt) again, or a new run
      // whose first append failed would never get its run.json.
      if (!appendedCommitOf(error)) {
        if (first) this.record.abandon();
        throw error;
      }
      pushError = error; // written, then the push failed: recorded like any entry, then thrown
    }
    if (first) this.record.commit(first.record);
    if (snapshot) this.snapshotStep = snapshot.step;
    if (safe.phase === 'result' && safe.step > (this.lastResult?.step ?? 0))
      this.lastResult = { step: safe.step, kind: safe.kind, oid: hashObject('blob', Buffer.from(content)) };
    this.history.add(safe); // a result only counted: never looked up again (positions only move on)
    if (safe.phase === 'result') this.unfinished.delete(safe.step);
    if (worktree) await this.store.local.releaseTree(this.run); // the journal holds a checkpoint now
    if (pushError !== undefined) throw pushError;
    return safe;
  }

  // The snapshot the loop offered, as snapshot.json's bytes, when the entry about to be written is
  // of the step right after it (the commit then holds the step the snapshot names, and the state
  // is that of just before this step). Built here, once: the offer costs nothing until taken.
  private takeOffer(step: number): { step: number; content: string } | undefined {
    const offer = this.offer;
    if (!offer || step !== offer.position + 1 || this.lastResult?.step !== offer.position) return undefined;
    this.offer = undefined;
    const loop = offer.state();
    const snapshot: RunSnapshot = {
      format: SNAPSHOT_FORMAT,
      run: this.run,
      step: offer.position,
      entry: { kind: this.lastResult.kind, oid: this.lastResult.oid },
      config: configDigest(this.config),
      finished: this.history.finishedCount,
      totals: this.history.totalsState(),
      loop,
    };
    if (snapshot.finished !== snapshot.step || snapshot.totals.lastStep !== snapshot.step) return undefined;
    // A secret in it (one the task was typed with): none is written, and a conversation redacted
    // here would not be the one a replay rebuilds. The run replays from the snapshot before, if any.
    const content = JSON.stringify(snapshot);
    if (this.options.redact && JSON.stringify(this.options.redact(snapshot)) !== content) return undefined;
    return { step: offer.position, content };
  }

  /**
   * Marks the run finished (with its final answer) or failed. Writes nothing when the journal
   * already says so (replaying a finished run leaves the branch untouched).
   */
  async finish(status: 'finished' | 'failed', details: { final?: string; error?: string; refused?: boolean } = {}): Promise<void> {
    await this.record.finish(status, details);
  }

  /** The configuration the run uses: the one run.json recorded, else the one it will record. */
  get config(): RunConfig | undefined {
    return this.record.current?.config ?? this.options.config;
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
