// Bringing journals from other machines into this one. After `git fetch`, each remote-tracking
// `refs/remotes/<remote>/agent-journal` is folded into the local branch: created from it, fast-
// forwarded to it, or merged with it when both sides appended different runs. When both sides
// appended to the same run, nothing is overwritten: the conflict is reported, naming the entries,
// and that run alone stays as this machine has it; every other run of the fetched journal is still
// folded in (a commit on the local branch alone, so the remote is not taken as merged: the diverged
// run is reported again at every sync until it is settled). A run one side only extended (its other
// side's entries all there, the same bytes) is not diverged: the longer copy is taken.
// Which remotes hold a run says where it must be fenced (session/start.ts: a fetched run pushes there).
// A shallow journal (push.ts fetchJournal) folds in the same way: git walks the history it has.
import { JournalConflictError } from '../errors/index.js';
import { runSync } from '../os/processes.js';
import { listJournalRefs } from './journal-refs.js';
import { makeCommit, makeTree, TREE_MODE, type GitObject, type Tree } from '../git/git-object.js';
import type { JournalStore } from './store.js';
import { diffTrees } from '../git/tree-diff.js';

/** What folding one fetched journal into the local branch did. */
export interface SyncReport {
  source: string;
  action: 'created' | 'fast-forward' | 'merged' | 'up-to-date' | 'conflict';
  /** The runs both sides appended to (action `conflict`), each with the entries that differ. */
  conflicts?: Array<{ run: string; entries: string[] }>;
  /** With a conflict: the other runs of the fetched journal were folded into the local branch (a commit on it alone). */
  folded?: boolean;
}

/**
 * Folds every remote-tracking journal into the local branch. A conflict on `focusRun` (the run
 * about to be driven) throws; conflicts on other runs leave that remote unmerged and are reported.
 */
export async function syncJournals(store: JournalStore, focusRun?: string): Promise<SyncReport[]> {
  const reports: SyncReport[] = [];
  for (const ref of listJournalRefs(store.repo.commonDir)) {
    if (!ref.local) reports.push(await integrate(store, ref.tip, ref.source, focusRun));
  }
  return reports;
}

/**
 * The remotes whose fetched journal (`refs/remotes/<remote>/agent-journal`) holds `run`, among
 * those still configured (`remote.<name>.url`): `origin` first, then by name. A run there came from
 * (or went to) another machine, which may go on with it too.
 */
export async function remotesHolding(store: JournalStore, run: string): Promise<string[]> {
  const holding: string[] = [];
  for (const ref of listJournalRefs(store.repo.commonDir)) {
    if (ref.local || !(await holdsRun(store, ref.tip, run))) continue;
    if (git(store, ['config', '--get', `remote.${ref.source}.url`]).status === 0) holding.push(ref.source);
  }
  return holding.sort((a, b) => Number(b === 'origin') - Number(a === 'origin') || a.localeCompare(b));
}

// Whether the journal at `commit` has a folder for `run`. A commit or tree that cannot be read (a
// partial clone offline) holds nothing that can be known.
async function holdsRun(store: JournalStore, commit: string, run: string): Promise<boolean> {
  try {
    const root = await store.tree((await store.objects.readCommit(commit)).tree);
    const runs = root.get('runs');
    return runs?.mode === TREE_MODE && (await store.tree(runs.oid)).get(run)?.mode === TREE_MODE;
  } catch {
    return false;
  }
}

/** Throws the conflict that `syncJournals` reported for `run`, if any. */
export function assertNoConflict(reports: SyncReport[], run: string): void {
  for (const report of reports) {
    const conflict = report.conflicts?.find((c) => c.run === run);
    if (conflict) throw new JournalConflictError(run, report.source, conflict.entries);
  }
}

/** Folds the journal at commit `theirs` (from `source`) into the local branch. */
export async function integrate(store: JournalStore, theirs: string, source: string, focusRun?: string): Promise<SyncReport> {
  for (;;) {
    await store.refresh();
    const ours = store.tip;
    if (!ours) {
      if (await store.moveTip(theirs, `savepoint: created from ${source}`, undefined)) return { source, action: 'created' };
      continue;
    }
    if (ours === theirs || isAncestor(store, theirs, ours)) return { source, action: 'up-to-date' };
    if (isAncestor(store, ours, theirs)) {
      if (await store.moveTip(theirs, `savepoint: fast-forward to ${source}`, ours)) return { source, action: 'fast-forward' };
      continue;
    }
    // In a shallow clone (a CI job's journal, fetched with its last commit only) the base may lie
    // below the cut and git finds none: every run then counts as new on both sides, so a run both
    // hold differently is a conflict unless one copy extends the other. Never an overwrite.
    const base = mergeBase(store, ours, theirs);
    const objects: GitObject[] = [];
    const { tree, conflicts, unchanged } = await mergeRuns(store, ours, theirs, base, objects);
    if (conflicts.length) {
      const mine = conflicts.find((c) => c.run === focusRun);
      if (mine) throw new JournalConflictError(mine.run, source, mine.entries);
      // The diverged runs stay as they are here; the others come in. Not a merge: with `theirs` as a
      // parent, the next sync would take the remote as folded in and never name the divergence again.
      if (unchanged) return { source, action: 'conflict', conflicts, folded: false };
      const names = conflicts.map((c) => c.run).join(', ');
      const commit = makeCommit({
        tree,
        parents: [ours],
        message: `Fold in the agent journal from ${source}, all but diverged run ${names}`,
      });
      store.objects.write([...objects, commit]);
      if (await store.moveTip(commit.oid, `savepoint: fold in the journal from ${source} (run ${names} diverged)`, ours))
        return { source, action: 'conflict', conflicts, folded: true };
      continue;
    }
    const commit = makeCommit({ tree, parents: [ours, theirs], message: `Merge the agent journal from ${source}` });
    store.objects.write([...objects, commit]);
    if (await store.moveTip(commit.oid, `savepoint: merge the journal from ${source}`, ours)) return { source, action: 'merged' };
  }
}

// The union of both sides' runs; a run changed on both sides is a conflict, unless one side's copy
// only extends the other's (see extendsRun). `unchanged`: the result is our own tree.
async function mergeRuns(store: JournalStore, ours: string, theirs: string, base: string | undefined, out: GitObject[]) {
  const runsOf = async (commit: string | undefined): Promise<{ root: Tree; runs: Tree }> => {
    if (!commit) return { root: new Map(), runs: new Map() };
    const root = await store.tree((await store.objects.readCommit(commit)).tree);
    const runs = root.get('runs');
    return { root, runs: runs?.mode === TREE_MODE ? await store.tree(runs.oid) : new Map() };
  };
  const [o, t, b] = await Promise.all([runsOf(ours), runsOf(theirs), runsOf(base)]);
  const merged: Tree = new Map(o.runs);
  const conflicts: Array<{ run: string; entries: string[] }> = [];
  let unchanged = true;
  for (const [run, entry] of t.runs) {
    const mine = o.runs.get(run)?.oid;
    const was = b.runs.get(run)?.oid;
    if (mine === entry.oid || entry.oid === was) continue;
    if (mine === was) {
      merged.set(run, entry);
      unchanged = false;
      continue;
    }
    const changes = await diffTrees(store.objects, mine, entry.oid, `runs/${run}/`);
    if (extendsRun(changes, run, 'deleted')) continue; // ours holds all of theirs: kept
    if (extendsRun(changes, run, 'added')) {
      merged.set(run, entry);
      unchanged = false;
    } else conflicts.push({ run, entries: changes.map((c) => c.path).filter((p) => !p.startsWith(`runs/${run}/worktree/`)) });
  }
  const runsTree = makeTree(merged);
  const root: Tree = new Map(o.root);
  root.set('runs', { mode: TREE_MODE, oid: runsTree.oid });
  const rootTree = makeTree(root);
  out.push(runsTree, rootTree);
  return { tree: rootTree.oid, conflicts, unchanged };
}

// Whether one copy of a run holds every entry of the other, byte for byte, and more: the changes
// from ours to theirs only add entries (`added`: theirs is the longer) or only lack them (`deleted`:
// ours is), besides run.json (rewritten at every append), the snapshot (rewritten every so many
// steps: the longer copy's is the later one) and the working-tree checkpoint (its latest state).
// Such a copy went on from the other (a resume after a fetch), it did not diverge.
function extendsRun(changes: Array<{ path: string; change: string }>, run: string, change: 'added' | 'deleted'): boolean {
  const rewritten = new Set([`runs/${run}/run.json`, `runs/${run}/snapshot.json`]);
  return changes.every((c) => rewritten.has(c.path) || c.path.startsWith(`runs/${run}/worktree/`) || c.change === change);
}

function git(store: JournalStore, args: string[]) {
  return runSync('git', [`--git-dir=${store.repo.commonDir}`, ...args], { encoding: 'utf8' });
}

function isAncestor(store: JournalStore, ancestor: string, of: string): boolean {
  return git(store, ['merge-base', '--is-ancestor', '--end-of-options', ancestor, of]).status === 0;
}

function mergeBase(store: JournalStore, a: string, b: string): string | undefined {
  const result = git(store, ['merge-base', '--end-of-options', a, b]);
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}
