// The I/O shell behind `runs`, `log` and `show`: reads every journal the repository holds (its own
// `agent-journal` and the remote-tracking ones), merges a run found in several into one view that
// prefers the local copy, and hands the entries to the pure summarizer. Listing runs reads each
// run's run.json and trees, and its entries only when run.json's totals cannot say (run-listing.ts).
// Tested in test/cli/runs-totals.test.ts.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptEntryError, NoRunsError, UnknownRunError } from '../errors/index.js';
import { resolveRunId } from '../journal/run-id.js';

export { UnknownRunError };
import type { JournalEntry, RunRecord } from '../journal/entry.js';
import { listJournalRefs, type JournalRef } from '../journal/journal-refs.js';
import { listRunIds, listRunStepFiles, readRunEntries, readRunRecord, readStepFiles, type StepFile } from '../journal/reader.js';
import { runLockHolder } from '../locks/run-lock.js';
import { JournalStore } from '../journal/store.js';
import type { Repository } from '../git/repository.js';
import { followUpFiles, listedSteps, summaryFromTotals, trustedTotals } from './run-listing.js';
import { buildTimeline, compareEntries, followUpMessage, type RunSummary, type Timeline } from './summarize.js';

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
  /** The error behind `problem`, for a command that cannot go on without the whole run. */
  corrupt?: CorruptEntryError;
}

/**
 * The run as loadRun finds it, for a command that hands its fields to git (diff, show): a run
 * whose run.json or entries did not pass their checks is refused with that error, not shown empty.
 */
export async function loadWholeRun(journals: Journals, id: string | undefined): Promise<LoadedRun> {
  const run = await loadRun(journals, id);
  if (run.corrupt) throw run.corrupt;
  return run;
}

/** The journals of the repository around `dir`, each opened on its own ref. */
export interface Journals {
  repo: Repository;
  refs: Array<{ ref: JournalRef; store: JournalStore }>;
}

/** Opens the local journal and every remote-tracking one of the repository around `dir`. */
export async function openJournals(dir: string): Promise<Journals> {
  const local = await JournalStore.open(dir);
  const { repo } = local;
  const refs = [];
  // Every ref shares the local store's repository and object store: found and opened once.
  for (const ref of listJournalRefs(repo.commonDir)) refs.push({ ref, store: ref.ref === local.ref ? local : await local.forRef(ref.ref) });
  return { repo, refs };
}

/** One row of the run listing: a run's summary, the journal it was read from, and why it could not be read whole. */
export interface ListedRun {
  id: string;
  from: JournalRef;
  summary: RunSummary;
  problem: string | null;
}

/**
 * Every run in every journal, most recently active first; with a live process still at its first
 * step (nothing recorded yet, only its lock), as running with no steps. Reads each run's entries
 * only when its run.json's totals do not count them (older builds, a process killed mid-run).
 */
export async function listAllRuns(journals: Journals): Promise<ListedRun[]> {
  return (await listRunsKeepingLatest(journals)).runs;
}

// listAllRuns, and what it read of the most recently active run's copies (their run.json and file
// names), which loading that run next would read again: a long run's trees are then listed once.
async function listRunsKeepingLatest(
  journals: Journals,
): Promise<{ runs: ListedRun[]; latest: Map<JournalStore, ListedCopy> | undefined }> {
  const ids = await allRunIds(journals);
  const held = await Promise.all(journals.refs.map(async ({ store }) => new Set(await listRunIds(store))));
  const locked = lockedRuns(journals.repo.commonDir);
  const runs: ListedRun[] = [];
  let latest: { run: ListedRun; copies: ListedCopy[] } | undefined;
  for (const id of ids) {
    const listed = await listFrom(journals, held, id, locked.has(id));
    if (!listed) continue;
    runs.push(listed.run);
    if (!latest || mostRecentFirst(listed.run, latest.run) < 0) latest = listed; // only the latest's listing is kept
  }
  for (const id of startingRuns(journals.repo.commonDir, ids, locked))
    runs.push({ id, from: localRef(journals), summary: startingTimeline(id).run, problem: null });
  runs.sort(mostRecentFirst);
  const kept = latest && runs[0] === latest.run ? new Map(latest.copies.filter((c) => !c.problem).map((c) => [c.store, c])) : undefined;
  return { runs, latest: kept };
}

function mostRecentFirst(a: ListedRun, b: ListedRun): number {
  return (b.summary.lastActivity ?? '').localeCompare(a.summary.lastActivity ?? '') || a.id.localeCompare(b.id);
}

/** The run `id`, or (no id) the most recently active run; throws UnknownRunError / NoRunsError. */
export async function loadRun(journals: Journals, id: string | undefined): Promise<LoadedRun> {
  const ids = await allRunIds(journals);
  if (id === undefined) {
    const { runs, latest: listed } = await listRunsKeepingLatest(journals);
    const [latest] = runs;
    if (!latest) throw new NoRunsError(journals.repo.root);
    if (!ids.has(latest.id))
      return { id: latest.id, record: undefined, entries: [], from: latest.from, timeline: startingTimeline(latest.id), problem: null };
    return (await loadFrom(journals, latest.id, listed))!;
  }
  const run = await loadFrom(journals, resolveRunId(id, [...ids]) ?? id);
  if (!run)
    throw new UnknownRunError(
      id,
      journals.refs.map((r) => r.ref.ref.replace(/^refs\/(heads|remotes)\//, '')),
    );
  return run;
}

function localRef(journals: Journals): JournalRef {
  return journals.refs.find((r) => r.ref.local)?.ref ?? { ref: 'refs/heads/agent-journal', source: 'local', local: true, tip: '' };
}

// A run a live process holds the lock of, with nothing in any journal yet.
function startingTimeline(id: string): Timeline {
  return buildTimeline(id, undefined, [], { running: true });
}

// The ids of every run in every journal.
async function allRunIds(journals: Journals): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const { store } of journals.refs) for (const id of await listRunIds(store)) ids.add(id);
  return ids;
}

// The runs with a lock file (held by a live process or left by a dead one): reading the folder once
// spares a failed read per run. No run id starts with "_": those are savepoint's own locks.
function lockedRuns(commonDir: string): Set<string> {
  let names: string[];
  try {
    names = readdirSync(join(commonDir, 'savepoint', 'locks'));
  } catch {
    return new Set();
  }
  return new Set(names.filter((name) => name.endsWith('.lock') && !name.startsWith('_')).map((name) => name.slice(0, -'.lock'.length)));
}

// Runs a live process holds the lock of that no journal has yet: live at their first step.
function startingRuns(commonDir: string, known: Set<string>, locked: Set<string>): string[] {
  return [...locked].sort().filter((id) => !known.has(id) && runLockHolder(commonDir, id) !== undefined);
}

// `listed`: what listing the runs read of this run's copies already (their run.json and file names).
async function loadFrom(journals: Journals, id: string, listed?: Map<JournalStore, ListedCopy>): Promise<LoadedRun | undefined> {
  const copies: Array<{
    ref: JournalRef;
    record: RunRecord | undefined;
    entries: JournalEntry[];
    problem: string | null;
    corrupt?: CorruptEntryError;
  }> = [];
  for (const { ref, store } of journals.refs) {
    if (!(await listRunIds(store)).includes(id)) continue;
    const copy = {
      ref,
      record: undefined as RunRecord | undefined,
      entries: [] as JournalEntry[],
      problem: null as string | null,
      corrupt: undefined as CorruptEntryError | undefined,
    };
    const known = listed?.get(store);
    try {
      copy.record = known ? known.record : await readRunRecord(store, id);
      copy.entries = known ? (known.entries ?? (await readStepFiles(store, id, known.files))) : await readRunEntries(store, id);
    } catch (error) {
      if (!(error instanceof CorruptEntryError)) throw error;
      copy.problem = error.message; // shown, not fatal: one damaged run must not hide the others
      copy.corrupt = error;
    }
    copies.push(copy);
  }
  const chosen = copies[0]; // the local journal is listed first
  if (!chosen) return undefined;
  const local = copies.find((c) => c.ref.local);
  const diverged =
    Boolean(local) && copies.some((c) => !c.ref.local && !c.problem && compareEntries(local!.entries, c.entries) === 'diverged');
  const running = runLockHolder(journals.repo.commonDir, id) !== undefined;
  const timeline = buildTimeline(id, chosen.record, chosen.entries, {
    running,
    diverged,
    shownFrom: chosen.ref.source,
    sources: copies.map((c) => c.ref.source),
  });
  return {
    id,
    record: chosen.record,
    entries: chosen.entries,
    from: chosen.ref,
    timeline,
    problem: chosen.problem,
    ...(chosen.corrupt ? { corrupt: chosen.corrupt } : {}),
  };
}

// One journal's copy of a run, as listed: its run.json and its entry files' names, not their entries.
interface ListedCopy {
  ref: JournalRef;
  store: JournalStore;
  record: RunRecord | undefined;
  files: StepFile[];
  problem: string | null;
  /** Its entries, when listing had to read them (see entriesOf in listFrom). */
  entries?: JournalEntry[];
}

async function listFrom(
  journals: Journals,
  held: Array<Set<string>>,
  id: string,
  locked: boolean,
): Promise<{ run: ListedRun; copies: ListedCopy[] } | undefined> {
  const copies: ListedCopy[] = [];
  for (const [i, { ref, store }] of journals.refs.entries()) {
    if (!held[i]!.has(id)) continue;
    const copy: ListedCopy = { ref, store, record: undefined, files: [], problem: null };
    await unlessCorrupt(copy, async () => {
      copy.record = await readRunRecord(store, id);
      copy.files = await listRunStepFiles(store, id);
    });
    copies.push(copy);
  }
  const chosen = copies[0]; // the local journal is listed first
  if (!chosen) return undefined;
  const entries = new Map<ListedCopy, JournalEntry[]>(); // read only where needed, each once
  const entriesOf = async (copy: ListedCopy): Promise<JournalEntry[]> => {
    if (!entries.has(copy)) {
      entries.set(copy, []);
      if (!copy.problem)
        await unlessCorrupt(copy, async () => entries.set(copy, (copy.entries = await readStepFiles(copy.store, id, copy.files))));
    }
    return entries.get(copy)!;
  };
  const local = copies.find((c) => c.ref.local);
  let diverged = false;
  for (const other of copies) {
    if (!local || other.ref.local || other.problem || diverged) continue;
    // One copy's files all in the other (same blobs): one extends the other. Else compare entries.
    if (includes(local.files, other.files) || includes(other.files, local.files)) continue;
    const mine = await entriesOf(local);
    const theirs = await entriesOf(other);
    diverged = !other.problem && compareEntries(mine, theirs) === 'diverged';
  }
  const context = {
    running: locked && runLockHolder(journals.repo.commonDir, id) !== undefined,
    diverged,
    shownFrom: chosen.ref.source,
    sources: copies.map((c) => c.ref.source),
  };
  const steps = listedSteps(chosen.files);
  const totals = chosen.problem || entries.has(chosen) ? undefined : trustedTotals(chosen.record, chosen.files, steps);
  if (totals && chosen.record) {
    const users = await unlessCorrupt(chosen, () => readStepFiles(chosen.store, id, followUpFiles(steps)));
    if (users)
      return {
        run: {
          id,
          from: chosen.ref,
          summary: summaryFromTotals(
            id,
            chosen.record,
            totals,
            steps,
            users.map((e) => followUpMessage(e) ?? ''),
            context,
          ),
          problem: null,
        },
        copies,
      };
  }
  const summary = buildTimeline(id, chosen.record, chosen.problem ? [] : await entriesOf(chosen), context).run;
  return { run: { id, from: chosen.ref, summary, problem: chosen.problem }, copies };
}

// Runs `read`, noting a corrupt entry on the copy (shown, not fatal: one damaged run must not hide the others).
async function unlessCorrupt<T>(copy: { problem: string | null }, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof CorruptEntryError)) throw error;
    copy.problem = error.message;
    return undefined;
  }
}

// Every file of `part` is in `whole`, with the same content.
function includes(whole: readonly StepFile[], part: readonly StepFile[]): boolean {
  const blobs = new Map(whole.map((f) => [f.path, f.oid]));
  return part.every((f) => blobs.get(f.path) === f.oid);
}
