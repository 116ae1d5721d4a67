// The I/O shell behind `runs`, `log` and `show`: reads every journal the repository holds (its own
// `agent-journal` and the remote-tracking ones), merges a run found in several into one view that
// prefers the local copy, and hands the entries to the pure summarizer.
import { CorruptEntryError, NoRunsError, UnknownRunError } from '../errors/index.js';

export { UnknownRunError };
import type { JournalEntry, RunRecord } from '../journal/entry.js';
import { listJournalRefs, type JournalRef } from '../journal/journal-refs.js';
import { listRunIds, readRunEntries, readRunRecord } from '../journal/reader.js';
import { findRepository, type Repository } from '../journal/repository.js';
import { runLockHolder } from '../journal/run-lock.js';
import { JournalStore } from '../journal/store.js';
import { summaryFromTotals } from './run-totals.js';
import { buildTimeline, compareEntries, type RunSummary, type Timeline } from './summarize.js';

// One run as read from the journals: its record and entries from the preferred copy, and its view.
export interface LoadedRun {
  id: string;
  record: RunRecord | undefined;
  entries: JournalEntry[];
  // The journal it was read from (local when the run is there).
  from: JournalRef;
  timeline: Timeline;
  // Set when the run's entries could not be read (a corrupt entry): the timeline is then empty.
  problem: string | null;
}

// The journals of the repository around `dir`, each opened on its own ref.
export interface Journals {
  repo: Repository;
  refs: Array<{ ref: JournalRef; store: JournalStore }>;
}

// Opens the local journal and every remote-tracking one of the repository around `dir`.
export async function openJournals(dir: string): Promise<Journals> {
  const repo = findRepository(dir);
  const refs = [];
  for (const ref of listJournalRefs(repo.commonDir)) refs.push({ ref, store: await JournalStore.open(dir, { ref: ref.ref }) });
  return { repo, refs };
}

/** One line of `savepoint runs`: a run's summary, and why it could not be read whole (or null). */
export interface RunRow {
  id: string;
  summary: RunSummary;
  problem: string | null;
}

// The run ids of each journal, in the order of `journals.refs`.
async function runIdsByRef(journals: Journals): Promise<Array<Set<string>>> {
  return Promise.all(journals.refs.map(async ({ store }) => new Set(await listRunIds(store))));
}

/**
 * Every run's summary, most recently active first: from the totals in run.json where they still
 * hold (see run-totals.ts), else from the run's entries.
 */
export async function listRunSummaries(journals: Journals): Promise<RunRow[]> {
  const idsByRef = await runIdsByRef(journals);
  const rows: RunRow[] = [];
  for (const id of new Set(idsByRef.flatMap((ids) => [...ids]))) {
    const holders = journals.refs.filter((_, i) => idsByRef[i]!.has(id));
    if (holders.length === 1) {
      const { ref, store } = holders[0]!;
      try {
        const running = runLockHolder(journals.repo.commonDir, id) !== undefined;
        const summary = await summaryFromTotals(store, id, await readRunRecord(store, id), { running, shownFrom: ref.source, sources: [ref.source] });
        if (summary) {
          rows.push({ id, summary, problem: null });
          continue;
        }
      } catch (error) {
        if (!(error instanceof CorruptEntryError)) throw error; // a damaged run.json: read it the long way, which says so
      }
    }
    const run = await loadFrom(journals, id, idsByRef);
    if (run) rows.push({ id, summary: run.timeline.run, problem: run.problem });
  }
  return rows.sort((a, b) => (b.summary.lastActivity ?? '').localeCompare(a.summary.lastActivity ?? '') || a.id.localeCompare(b.id));
}

/** Every run in every journal, read whole (entries and timeline), most recently active first. */
export async function loadAllRuns(journals: Journals): Promise<LoadedRun[]> {
  const idsByRef = await runIdsByRef(journals);
  const runs: LoadedRun[] = [];
  for (const id of new Set(idsByRef.flatMap((ids) => [...ids]))) {
    const run = await loadFrom(journals, id, idsByRef);
    if (run) runs.push(run);
  }
  return runs.sort((a, b) => (b.timeline.run.lastActivity ?? '').localeCompare(a.timeline.run.lastActivity ?? '') || a.id.localeCompare(b.id));
}

/** The run `id`, or (no id) the most recently active run; throws UnknownRunError / NoRunsError. */
export async function loadRun(journals: Journals, id: string | undefined): Promise<LoadedRun> {
  if (id === undefined) {
    const [latest] = await listRunSummaries(journals);
    if (!latest) throw new NoRunsError(journals.repo.root);
    return (await loadFrom(journals, latest.id))!;
  }
  const run = await loadFrom(journals, id);
  if (!run) throw new UnknownRunError(id, journals.refs.map((r) => r.ref.ref.replace(/^refs\/(heads|remotes)\//, '')));
  return run;
}

async function loadFrom(journals: Journals, id: string, idsByRef?: Array<Set<string>>): Promise<LoadedRun | undefined> {
  const copies: Array<{ ref: JournalRef; record: RunRecord | undefined; entries: JournalEntry[]; problem: string | null }> = [];
  for (const [i, { ref, store }] of journals.refs.entries()) {
    if (!(idsByRef ? idsByRef[i]!.has(id) : (await listRunIds(store)).includes(id))) continue;
    const copy = { ref, record: undefined as RunRecord | undefined, entries: [] as JournalEntry[], problem: null as string | null };
    try {
      copy.record = await readRunRecord(store, id);
      copy.entries = await readRunEntries(store, id);
    } catch (error) {
      if (!(error instanceof CorruptEntryError)) throw error;
      copy.problem = error.message; // shown, not fatal: one damaged run must not hide the others
    }
    copies.push(copy);
  }
  const chosen = copies[0]; // the local journal is listed first
  if (!chosen) return undefined;
  const local = copies.find((c) => c.ref.local);
  const diverged = Boolean(local) && copies.some((c) => !c.ref.local && !c.problem && compareEntries(local!.entries, c.entries) === 'diverged');
  const running = runLockHolder(journals.repo.commonDir, id) !== undefined;
  const timeline = buildTimeline(id, chosen.record, chosen.entries, {
    running,
    diverged,
    shownFrom: chosen.ref.source,
    sources: copies.map((c) => c.ref.source),
  });
  return { id, record: chosen.record, entries: chosen.entries, from: chosen.ref, timeline, problem: chosen.problem };
}
