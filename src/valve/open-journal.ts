// Opening a run: its journal store, its lock (taking over one a dead process left), the commands a
// dead attempt left running, and its entries read and checked once, added up as they come.
import { UsageError } from '../errors/index.js';
import { isValidRunId } from '../journal/entry.js';
import { stepFilePath } from '../journal/layout.js';
import { readKeptEntries, readRunRecord } from '../journal/reader.js';
import { JournalStore } from '../journal/store.js';
import type { JournalStorage } from '../journal/journal-storage.js';
import { hostName } from '../os/proc.js';
import { History } from './history.js';
import { RunJournal } from './run-journal.js';
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
export async function openRunJournal<Store extends JournalStorage>(store: Store, options: Omit<OpenJournalOptions, 'dir'>): Promise<RunJournal<Store>> {
  assertRunId(options.run);
  if (options.store) store.hook(options.store);
  const { local } = store;
  local.assertWritable();
  const lock = local.lock(options.run);
  try {
    // A command a dead attempt started may still run (its own process group): stop it first.
    for (const orphan of await local.stopOrphans(options.run)) {
      options.onEvent?.({ type: 'orphan', position: orphan.step, description: orphan.description, pgid: orphan.pgid, startedAt: orphan.startedAt, outcome: orphan.outcome });
    }
    await store.refresh();
    const record = await readRunRecord(store, options.run);
    const tally = new EntryTotals(); // added up while the entries are read and checked: never read again for it
    const entries = await readKeptEntries(store, options.run, (entry) => tally.add(entry));
    if (typeof options.prompt === 'function') options = { ...options, prompt: !record && entries.length === 0 ? options.prompt() : undefined };
    if (typeof options.config === 'function') options = { ...options, config: await options.config(record) };
    if (typeof options.startCheckpoint === 'function') {
      options = { ...options, startCheckpoint: !record && entries.length === 0 ? await options.startCheckpoint() : undefined };
    }
    // Committed only with the first step, after the first model call: kept from a gc until then.
    if (typeof options.startCheckpoint === 'string' && !record) await local.keepTree(options.run, options.startCheckpoint);
    const origin = { baseCommit: record ? record.baseCommit : local.headCommit(), branch: local.headBranch(), worktree: local.worktree, host: hostName(), pid: process.pid };
    return new RunJournal(store, lock, options, record, new History(options.run, entries, (e) => stepFilePath(options.run, e.step, e.kind, e.phase), tally), origin);
  } catch (error) {
    lock.release();
    throw error;
  }
}

function assertRunId(run: string): void {
  if (!isValidRunId(run)) throw new UsageError(`"${run}" is not a valid run id: use 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit.`);
}
