// Reading runs back for a library user: by the directory of a repository, not through the store
// the journal is written with (store.ts stays inside). Each record is validated as it is read.
import type { JournalEntry, RunRecord } from './entry.js';
import { listRunIds, readRunEntries, readRunRecord } from './reader.js';
import { JournalStore } from './store.js';

/** A run as the journal holds it: its run.json and its entries in order (intents and results). */
export interface RecordedRun {
  record: RunRecord;
  entries: JournalEntry[];
}

/** The ids of every run on the `agent-journal` branch of the repository around `dir`, sorted. */
export async function listRuns(dir: string): Promise<string[]> {
  return listRunIds(await JournalStore.open(dir));
}

/** The run `run` of the repository around `dir`, or undefined when the journal has no such run. */
export async function readRun(dir: string, run: string): Promise<RecordedRun | undefined> {
  const store = await JournalStore.open(dir);
  const record = await readRunRecord(store, run);
  return record ? { record, entries: await readRunEntries(store, run) } : undefined;
}
