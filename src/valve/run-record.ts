// A run's run.json as the valve writes it: made when the run's first entry is written, then the same
// record with each process's attempt, its status and what the run was given added. The valve
// (run-journal.ts) only asks "is there a recorded result for this step?" and records it; what the
// run as a whole says about itself is written here.
import {
  RUN_FORMAT,
  serializeEntry,
  type AttemptEnd,
  type RunRecord,
  type RunSandbox,
  type RunTotals,
} from '../journal/entry.js';
import { runRecordPath } from '../journal/layout.js';
import { appendedCommitOf, type JournalFile } from '../journal/store.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import { oneLine, shortValue } from '../format/text.js';
import type { OpenJournalOptions } from './step-types.js';
import type { History } from './history.js';

/** Where a run began and who is writing it now: the facts run.json records that come from outside. */
export interface RunOrigin {
  /** The user's HEAD commit when the run was created (a fresh clone of it is restored from the checkpoint). */
  baseCommit: string | undefined;
  /** The branch HEAD was on, or null when detached. */
  branch: string | null;
  /** The working tree's root. */
  worktree: string;
  /** This machine's name and this process's pid, recorded with its attempt. */
  host: string;
  pid: number;
}

/** What the writer needs of the run: its id, its store, its hooks, its entries, and the guard that it still owns it. */
export interface RunRecordContext {
  run: string;
  store: JournalStorage;
  options: Omit<OpenJournalOptions, 'dir'>;
  origin: RunOrigin;
  /** What the journal recorded (totals, the last position, a step in flight). */
  history: History;
  /** Throws when another process took the run over (run-lock.ts). */
  checkOwner: () => void;
}

/**
 * The run's run.json: read when the run was opened, then written with this process's attempt at
 * its first entry, and again when the run finishes, fails, is interrupted or stops at a limit.
 */
export class RunRecordWriter {
  private record: RunRecord | undefined;
  // Set once this process has written its first entry (and its attempt into run.json).
  private attempt: number | undefined;
  // The attempt found killed before it recorded anything, to note at this process's first write (noteKilled).
  private killed: number | undefined;
  // How this process runs commands, recorded with its attempt (useSandbox).
  private sandbox: RunSandbox | undefined;

  constructor(
    private readonly context: RunRecordContext,
    record: RunRecord | undefined,
  ) {
    this.record = record;
  }

  /** The run's metadata as last read or written (undefined for a run not yet written). */
  get current(): RunRecord | undefined {
    return this.record;
  }

  /** What the model is sent for the task: the prompt run.json recorded (RunRecord.prompt), else the one a new run will record; undefined: the task itself. */
  get prompt(): string | undefined {
    return this.record ? this.record.prompt : this.context.options.prompt;
  }

  /**
   * The last attempt, when it ran a step left in flight again (`rerun`) and that step is still in
   * flight: it was killed before it recorded anything (its line in run.json is all it left).
   */
  get killedAttempt(): RunRecord['attempts'][number] | undefined {
    const last = this.record?.attempts.at(-1);
    if (last?.rerun === undefined || last.end || last.interruptedAt) return undefined;
    const { history } = this.context;
    return history.inFlight && history.lastPosition === last.rerun ? last : undefined;
  }

  /**
   * How this process runs commands (the session's sandbox, chosen before anything runs live):
   * recorded with this process's attempt at its first write. Told, never asked for during an append.
   */
  useSandbox(sandbox: RunSandbox): void {
    this.sandbox = sandbox;
  }

  /** The attempt this process's entries belong to. */
  get attemptNumber(): number {
    return this.attempt ?? (this.record?.attempts.length ?? 0) + 1;
  }

  /** Whether this process has written anything to the run yet. */
  get written(): boolean {
    return this.attempt !== undefined;
  }

  /**
   * The run.json file to append with this process's first entry (at `step`, with the totals that
   * entry makes), or undefined when this process has written before. Until `commit`, a failed
   * append gives it back with `abandon`, so the next write carries it again.
   */
  firstWrite(step: number, totals: RunTotals, rerun?: number): { file: JournalFile; record: RunRecord } | undefined {
    if (this.attempt !== undefined) return undefined;
    this.attempt = this.attemptNumber;
    // run.json holds the task, which may quote a secret: it is redacted like every entry.
    const record = this.redact(this.next({ status: 'running', totals }, step, rerun));
    return { file: { path: runRecordPath(this.context.run), content: serializeEntry(record) }, record };
  }

  /**
   * The last attempt ran a step again and was killed before it recorded anything (RunJournal finds
   * that at open): this process's first write notes it on that attempt.
   */
  noteKilled(attempt: number): void {
    this.killed = attempt;
  }

  /**
   * A new attempt from the next write on, in this same process: an interactive session's next
   * message to the run it holds open is an attempt of its own, as when each message opened the
   * run again (run.json turns "running" with it, so a crash in its turn is not taken for finished).
   */
  newAttempt(): void {
    this.attempt = undefined;
    this.killed = undefined;
  }

  /** The first write's append failed and wrote nothing: the next write must carry run.json again. */
  abandon(): void {
    this.attempt = undefined;
  }

  /** The first write's append landed: this is the run's record now. */
  commit(record: RunRecord): void {
    this.record = record;
  }

  /** Whether run.json is not yet on the branch (a new run before its first entry). */
  get isNew(): boolean {
    return this.record === undefined;
  }

  /**
   * Marks the run finished (with its final answer) or failed. Writes nothing when the journal
   * already says so (replaying a finished run leaves the branch untouched), nor a failure of a run
   * that never wrote anything. A success clears an earlier attempt's error from the run's status;
   * the attempt that failed keeps it in its own history (the entries and the commit that said so).
   */
  async finish(status: 'finished' | 'failed', details: { final?: string; error?: string; refused?: boolean }): Promise<void> {
    const { history } = this.context;
    const totals = history.totals();
    const lastPosition = history.lastPosition;
    if (
      this.record &&
      this.record.status === status &&
      this.record.final === details.final &&
      Boolean(this.record.refused) === Boolean(details.refused) &&
      this.attempt === undefined
    )
      return;
    if (!this.record && this.attempt === undefined && lastPosition === 0 && status === 'failed') return;
    const change: Partial<RunRecord> = { status, ...details, totals };
    const at = new Date().toISOString();
    // Where HEAD was when it finished: the identical `run` later replays it only on a repository that has not moved on.
    const head = status === 'finished' ? this.context.store.local.headCommit() : undefined;
    const end: AttemptEnd =
      status === 'finished'
        ? { how: 'finished', at, ...(head ? { head } : {}) }
        : { how: 'failed', at, ...(details.error !== undefined ? { error: details.error } : {}) };
    const next = this.next(change);
    // This process's attempt says how it ended.
    next.attempts = next.attempts.map((a) => (a.number === this.attempt ? { ...a, end } : a));
    const record = this.redact(next);
    if (status === 'finished') delete record.error;
    // A refusal ends the run as finishing does (nothing more to do without a follow-up), but says so;
    // a later answer to a follow-up clears it.
    if (!details.refused) delete record.refused;
    const what = details.refused
      ? `refused: ${shortValue(details.final ?? '', 60)}`
      : status === 'finished'
        ? `finished: ${shortValue(details.final ?? '', 60)}`
        : `failed: ${shortValue(details.error ?? '', 60)}`;
    try {
      await this.context.store.append(
        [{ path: runRecordPath(this.context.run), content: serializeEntry(record) }],
        `${this.context.run} ${oneLine(what, 200)}`,
        this.context.checkOwner,
      );
    } catch (error) {
      if (appendedCommitOf(error)) this.record = record; // recorded; only the push failed
      throw error;
    }
    this.record = record;
    await this.context.store.local.releaseTree(this.context.run); // nothing more will reuse it
  }

  /**
   * Notes that this process's attempt was stopped (Ctrl-C, SIGTERM, SIGHUP: `by` says), so the next one says the
   * run was interrupted rather than that it crashed. Nothing to note when it wrote nothing.
   */
  async markInterrupted(by = 'a signal'): Promise<void> {
    const at = new Date().toISOString();
    await this.note(`interrupted (${by})`, (a, mine) => (mine ? { ...a, end: { how: 'interrupted', at }, interruptedAt: at } : a));
  }

  /**
   * Notes the totals of a run stopped at one of its limits (`--max-steps` and the like),
   * unfinished: else `savepoint runs` could not trust them and would read every entry.
   */
  async markStopped(limit: string): Promise<void> {
    const at = new Date().toISOString();
    await this.note(`stopped at its ${limit} limit`, (a, mine) => (mine ? { ...a, end: { how: 'limit', at, limit } } : a));
  }

  // run.json again, with the totals as they are now (and each attempt changed by `attempt`, when
  // given); nothing when this process wrote nothing.
  private async note(
    what: string,
    attempt?: (a: RunRecord['attempts'][number], mine: boolean) => RunRecord['attempts'][number],
  ): Promise<void> {
    if (this.attempt === undefined || !this.record) return;
    const attempts = attempt ? this.record.attempts.map((a) => attempt(a, a.number === this.attempt)) : this.record.attempts;
    const record: RunRecord = { ...this.record, attempts, updatedAt: new Date().toISOString(), totals: this.context.history.totals() };
    await this.context.store.append(
      [{ path: runRecordPath(this.context.run), content: serializeEntry(record) }],
      `${this.context.run} ${what} in attempt ${this.attempt}`,
      this.context.checkOwner,
    );
    this.record = record;
  }

  private redact(record: RunRecord): RunRecord {
    return this.context.options.redact ? this.context.options.redact(record) : record;
  }

  // The record with `change`, and with this process's attempt when it is its first write
  // (`firstLiveStep`, with the sandbox it runs commands in); the pinned configuration is kept, or
  // added to an older run's.
  private next(change: Partial<RunRecord>, firstLiveStep?: number, rerun?: number): RunRecord {
    const now = new Date().toISOString();
    const { options, origin } = this.context;
    const base = this.record ?? newRunRecord(this.context.run, options, origin, now);
    const sandbox: RunSandbox | undefined = firstLiveStep === undefined ? undefined : (this.sandbox ?? options.sandbox?.());
    const noted = (a: RunRecord['attempts'][number]) =>
      a.number === this.killed && !a.killed ? { ...a, killed: { noticedAt: now, noticedBy: this.attempt! } } : a;
    const attempts =
      firstLiveStep === undefined
        ? base.attempts
        : [
            ...base.attempts.map(noted),
            {
              number: this.attempt!,
              startedAt: now,
              host: origin.host,
              pid: origin.pid,
              firstLiveStep,
              worktree: origin.worktree,
              ...(sandbox ? { sandbox } : {}),
              ...(rerun !== undefined ? { rerun } : {}),
            },
          ];
    const pinned = base.config ?? options.config;
    return { ...base, ...change, ...(sandbox ? { sandbox } : {}), attempts, updatedAt: now, ...(pinned ? { config: pinned } : {}) };
  }
}

// The run.json of a run about to get its first entry: its task, model, base commit, where it began, its lineage.
function newRunRecord(run: string, options: Omit<OpenJournalOptions, 'dir'>, origin: RunOrigin, now: string): RunRecord {
  return {
    format: RUN_FORMAT,
    id: run,
    task: options.task ?? '',
    ...(options.prompt !== undefined ? { prompt: options.prompt } : {}),
    model: options.model,
    baseCommit: 'baseCommit' in options ? options.baseCommit : origin.baseCommit,
    worktree: origin.worktree,
    branch: origin.branch,
    createdAt: now,
    updatedAt: now,
    status: 'running',
    lineage: options.lineage ?? null,
    ...(options.startCheckpoint !== undefined ? { startCheckpoint: options.startCheckpoint } : {}),
    attempts: [],
  };
}
