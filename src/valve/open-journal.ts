// Opening a run: its journal store, its lock (taking over one a dead process left), the commands a
// dead attempt left running, and its entries read and checked once, added up as they come.
import { ObjectTooLargeError, UsageError } from '../errors/index.js';
import type { RunRecord } from '../journal/entry.js';
import { TREE_MODE } from '../git/git-object.js';
import { isValidRunId } from '../journal/entry.js';
import { stepFilePath } from '../journal/layout.js';
import { readKeptEntries, readRunRecord } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import { hostName } from '../os/proc.js';
import { History } from './history.js';
import type { RunLock } from '../locks/run-lock.js';
import { RunJournal, type ResultEntry } from './run-journal.js';
import { configDigest, MAX_SNAPSHOT_BYTES, parseSnapshot, snapshotPath, type RunSnapshot } from './snapshot.js';
import { EntryTotals } from './run-totals.js';
import type { OpenJournalOptions } from './step-types.js';

/** Opens (or prepares to create) a run and takes its lock. */
export async function openJournal(options: OpenJournalOptions): Promise<RunJournal> {
  assertRunId(options.run);
  return openRunJournal(await JournalStore.open(options.dir, options.store), options);
}

/**
 * Opens a run on a journal store already open (the session found its run through it): nothing
 * is found or opened again. The store's hooks (`options.store`) are set on it. Any JournalStorage
 * serves: the git one, or the in-memory one (memory-store.ts) the valve's tests run on. What a new
 * run records (its prompt, configuration, start checkpoint) is given in `options`; a caller that
 * must first know whether the run is new opens it with `openRun` and pins it with `OpeningRun.pin`.
 */
export async function openRunJournal<Store extends JournalStorage>(
  store: Store,
  options: Omit<OpenJournalOptions, 'dir'>,
): Promise<RunJournal<Store>> {
  const { prompt, config, startCheckpoint, ...opening } = options;
  const opened = await openRun(store, opening);
  return opened.pin({
    ...(prompt !== undefined ? { prompt } : {}),
    ...(config ? { config } : {}),
    ...(startCheckpoint !== undefined ? { startCheckpoint } : {}),
  });
}

/** What a run records when it is created, given by its caller once it knows what opening found (OpeningRun.pin). */
export type RunStart = Pick<OpenJournalOptions, 'prompt' | 'config' | 'startCheckpoint'>;

/**
 * Opens a run and reads it, without pinning what a new run records: the run's lock is held, the
 * commands a dead attempt left running are stopped, its run.json and entries are read and checked.
 * The caller reads what was found (`record`, `isNew`), makes what the run needs (a new run's prompt,
 * configuration and start checkpoint; an existing run's configuration from its own), and hands it
 * down with `pin`, or gives the run up with `release`. Nothing here calls back to the caller.
 */
export async function openRun<Store extends JournalStorage>(
  store: Store,
  options: Omit<OpenJournalOptions, 'dir' | keyof RunStart>,
): Promise<OpeningRun<Store>> {
  assertRunId(options.run);
  if (options.store) store.hook(options.store);
  const { local } = store;
  local.assertWritable();
  const lock = local.lock(options.run);
  try {
    // A command a dead attempt started may still run (its own process group): stop it first.
    for (const orphan of await local.stopOrphans(options.run)) {
      options.onEvent?.({
        type: 'orphan',
        position: orphan.step,
        description: orphan.description,
        pgid: orphan.pgid,
        startedAt: orphan.startedAt,
        outcome: orphan.outcome,
      });
    }
    await store.refresh();
    const record = await readRunRecord(store, options.run);
    // A snapshot of the loop at a recent step, when asked for and valid: only the entries after it are read.
    const snapshot = options.fromSnapshot && record ? await readSnapshot(store, options.run, record) : undefined;
    // Added up while the entries are read and checked: never read again for it.
    const tally = snapshot ? EntryTotals.from(snapshot.totals) : new EntryTotals();
    let lastResult: ResultEntry | undefined = snapshot && { step: snapshot.step, kind: snapshot.entry.kind, oid: snapshot.entry.oid };
    const entries = await readKeptEntries(
      store,
      options.run,
      (entry, oid) => {
        tally.add(entry);
        if (entry.phase === 'result' && entry.step > (lastResult?.step ?? 0)) lastResult = { step: entry.step, kind: entry.kind, oid };
      },
      snapshot?.step,
    );
    const history = new History(options.run, entries, (e) => stepFilePath(options.run, e.step, e.kind, e.phase), tally, snapshot?.step);
    return new OpeningRun(store, lock, options, record, history, { snapshot, lastResult }, !record && entries.length === 0);
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** A run opened and read, its lock held, waiting for what its caller gives it (`pin`) to become the valve. */
export class OpeningRun<Store extends JournalStorage = JournalStorage> {
  private done = false;

  /** @internal Made by openRun. */
  constructor(
    private readonly store: Store,
    private readonly lock: RunLock,
    private readonly options: Omit<OpenJournalOptions, 'dir' | keyof RunStart>,
    /** The run's run.json as opening read it; undefined: none yet. */
    readonly record: RunRecord | undefined,
    private readonly history: History,
    private readonly start: { snapshot?: RunSnapshot; lastResult?: ResultEntry },
    /** The run has neither run.json nor an entry: its first write creates it, with what `pin` is given. */
    readonly isNew: boolean,
  ) {}

  /**
   * The run as the valve, with what it records: a new run's prompt, configuration and start
   * checkpoint (a start checkpoint is kept from a gc until the first step records it), and the
   * configuration an older run without one gets at its next write. Once only; a throw releases the run.
   */
  async pin(given: RunStart): Promise<RunJournal<Store>> {
    if (this.done) throw new Error(`the run ${this.options.run} was pinned or released already`);
    this.done = true;
    const { store, record } = this;
    const { local } = store;
    try {
      // Committed only with the first step, after the first model call: kept from a gc until then.
      if (given.startCheckpoint !== undefined && !record) await local.keepTree(this.options.run, given.startCheckpoint);
      const origin = {
        baseCommit: record ? record.baseCommit : local.headCommit(),
        branch: local.headBranch(),
        worktree: local.worktree,
        host: hostName(),
        pid: process.pid,
      };
      return new RunJournal(store, this.lock, { ...this.options, ...given }, record, this.history, origin, this.start);
    } catch (error) {
      this.lock.release();
      throw error;
    }
  }

  /** Gives the run up before it was pinned (what the caller had to make for it failed): its lock is released. Nothing once pinned. */
  release(): void {
    if (this.done) return;
    this.done = true;
    this.lock.release();
  }
}

/**
 * The run's snapshot (valve/snapshot.ts) when it can stand for the steps up to its own: of this
 * format and run, every field what it must be, made with the run's pinned configuration, and about
 * the very entry the branch holds for its step (its blob id). Undefined otherwise: the run replays
 * whole, as a run written before snapshots does.
 */
export async function readSnapshot(store: JournalStorage, run: string, record: RunRecord): Promise<RunSnapshot | undefined> {
  let bytes: Buffer | undefined;
  try {
    bytes = await store.fileAt(snapshotPath(run), MAX_SNAPSHOT_BYTES);
  } catch (error) {
    if (error instanceof ObjectTooLargeError) return undefined;
    throw error;
  }
  const snapshot = bytes && parseSnapshot(bytes.toString('utf8'), run);
  if (!snapshot || snapshot.config !== configDigest(record.config)) return undefined;
  const path = stepFilePath(run, snapshot.step, snapshot.entry.kind, 'result');
  const slash = path.lastIndexOf('/');
  const named = (await store.treeAt(path.slice(0, slash)))?.get(path.slice(slash + 1));
  return named && named.mode !== TREE_MODE && named.oid === snapshot.entry.oid ? snapshot : undefined;
}

function assertRunId(run: string): void {
  if (!isValidRunId(run))
    throw new UsageError(`"${run}" is not a valid run id: use 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit.`);
}
