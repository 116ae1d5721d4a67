// The I/O shell behind `runs`, `log` and `show`: reads every journal the repository holds (its own
// `agent-journal` and the remote-tracking ones), merges a run found in several into one view that
// prefers the local copy, and hands the entries to the pure summarizer.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptEntryError, NoRunsError, UnknownRunError } from '../errors/index.js';
import { resolveRunId } from '../journal/run-id.js';

export { UnknownRunError };
import type { JournalEntry, RunRecord } from '../journal/entry.js';
import { listJournalRefs, type JournalRef } from '../journal/journal-refs.js';
import { listRunIds, readRunEntries, readRunRecord } from '../journal/reader.js';
import { findRepository, type Repository } from '../journal/repository.js';
import { runLockHolder } from '../journal/run-lock.js';
import { JournalStore } from '../journal/store.js';
import { buildTimeline, compareEntries, type Timeline } from './summarize.js';

/** One run as read from the journals: its record and entries from the preferred copy, and its view. */
export interface LoadedRun {
  id: string;
  record: RunRecord | undefined;
  entries: JournalEntry[];
  /** The journal it was read from (local when the run is there). */
  from: JournalRef;
  timeline: Timeline;
  /** Set when the run's entries could not be read (a corrupt entry): the timeline is then empty. */
  problem: string | null;
}

/** The journals of the repository around `dir`, each opened on its own ref. */
export interface Journals {
  repo: Repository;
  refs: Array<{ ref: JournalRef; store: JournalStore }>;
}

/** Opens the local journal and every remote-tracking one of the repository around `dir`. */
export async function openJournals(dir: string): Promise<Journals> {
  const repo = findRepository(dir);
  const refs = [];
  for (const ref of listJournalRefs(repo.commonDir)) refs.push({ ref, store: await JournalStore.open(dir, { ref: ref.ref }) });
  return { repo, refs };
}

/**
 * Every run in every journal, most recently active first; with a live process still at its first
 * step (nothing recorded yet, only its lock), as running with no steps.
 */
export async function loadAllRuns(journals: Journals): Promise<LoadedRun[]> {
  const ids = await allRunIds(journals);
  const runs: LoadedRun[] = [];
  for (const id of ids) {
    const run = await loadFrom(journals, id);
    if (run) runs.push(run);
  }
  for (const id of startingRuns(journals.repo.commonDir, ids)) {
    const local = journals.refs.find((r) => r.ref.local)?.ref ?? { ref: 'refs/heads/agent-journal', source: 'local', local: true, tip: '' };
    runs.push({ id, record: undefined, entries: [], from: local, timeline: buildTimeline(id, undefined, [], { running: true }), problem: null });
  }
  return runs.sort((a, b) => (b.timeline.run.lastActivity ?? '').localeCompare(a.timeline.run.lastActivity ?? '') || a.id.localeCompare(b.id));
}

/** The run `id`, or (no id) the most recently active run; throws UnknownRunError / NoRunsError. */
export async function loadRun(journals: Journals, id: string | undefined): Promise<LoadedRun> {
  if (id === undefined) {
    const [latest] = await loadAllRuns(journals);
    if (!latest) throw new NoRunsError(journals.repo.root);
    return latest;
  }
  const run = await loadFrom(journals, resolveRunId(id, [...(await allRunIds(journals))]) ?? id);
  if (!run) throw new UnknownRunError(id, journals.refs.map((r) => r.ref.ref.replace(/^refs\/(heads|remotes)\//, '')));
  return run;
}

// The ids of every run in every journal.
async function allRunIds(journals: Journals): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const { store } of journals.refs) for (const id of await listRunIds(store)) ids.add(id);
  return ids;
}

// Runs a live process holds the lock of that no journal has yet: live at their first step.
function startingRuns(commonDir: string, known: Set<string>): string[] {
  let names: string[];
  try {
    names = readdirSync(join(commonDir, 'savepoint', 'locks'));
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith('.lock'))
    .map((name) => name.slice(0, -'.lock'.length))
    // No run id starts with "_": those are savepoint's own locks (the working tree's).
    .filter((id) => !id.startsWith('_') && !known.has(id) && runLockHolder(commonDir, id) !== undefined);
}

async function loadFrom(journals: Journals, id: string): Promise<LoadedRun | undefined> {
  const copies: Array<{ ref: JournalRef; record: RunRecord | undefined; entries: JournalEntry[]; problem: string | null }> = [];
  for (const { ref, store } of journals.refs) {
    if (!(await listRunIds(store)).includes(id)) continue;
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
