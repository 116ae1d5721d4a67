// Opening a run: its journal store, its lock (taking over one a dead process left), the commands a
// dead attempt left running, and its entries read and checked once, added up as they come.
// Tested in test/valve/run-journal.test.ts, test/valve/history.test.ts.
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
 * serves: the git one, or the in-memory one (memory-store.ts) the valve's tests run on.
 */
export async function openRunJournal<Store extends JournalStorage>(
  store: Store,
  options: Omit<OpenJournalOptions, 'dir'>,
): Promise<RunJournal<Store>> {
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
    if (typeof options.prompt === 'function')
      options = { ...options, prompt: !record && entries.length === 0 ? options.prompt() : undefined };
    if (typeof options.config === 'function') options = { ...options, config: await options.config(record) };
    if (typeof options.startCheckpoint === 'function') {
      options = { ...options, startCheckpoint: !record && entries.length === 0 ? await options.startCheckpoint() : undefined };
    }
    // Committed only with the first step, after the first model call: kept from a gc until then.
    if (typeof options.startCheckpoint === 'string' && !record) await local.keepTree(options.run, options.startCheckpoint);
    const origin = {
      baseCommit: record ? record.baseCommit : local.headCommit(),
      branch: local.headBranch(),
      worktree: local.worktree,
      host: hostName(),
      pid: process.pid,
    };
    const history = new History(options.run, entries, (e) => stepFilePath(options.run, e.step, e.kind, e.phase), tally, snapshot?.step);
    return new RunJournal(store, lock, options, record, history, origin, { snapshot, lastResult });
  } catch (error) {
    lock.release();
    throw error;
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
