// Before a resumed run goes live: the working tree must be what the journal last recorded, since
// the replayed steps assume the files as the run left them. SPEC's drift rules, as decisions:
//   - a clean checkout of the run's base commit (a fresh clone) is restored from the checkpoint at once;
//   - a fork not yet gone live is put on its parent's files at the fork point: the files the parent
//     wrote after it are set aside (saved under a ref) and put back, with no question (the fork decided);
//   - any other difference is the person's own work. The caller's flag, its default (keep, for a
//     session's message and `continue`) or its callback chooses restore, keep or stop. A restore
//     writes only files the run itself wrote, saving each file it overwrites or removes first; what
//     it leaves, and whatever is kept, is handed back so the model is told in its next request, and
//     the kept tree becomes the run's next checkpoint (the question is not asked again).
// No terminal here.
import type { History } from '../valve/history.js';
import type { RunRecord } from '../journal/entry.js';
import { readRunEntries, readRunRecord } from '../journal/reader.js';
import type { JournalStore } from '../journal/store.js';
import { DriftError, type FileChange } from '../errors/index.js';
import { filesTheRunWrote, findDrift, refuseUndoingFinishedRuns, type Drift } from '../worktree/drift.js';
import { restoreWorktree, type RestoreLimits, type RestoreResult, type RevealText } from '../worktree/restore.js';
import { setAsideFiles, type SetAside } from '../worktree/set-aside.js';
import type { WorktreeSnapshotter } from '../worktree/snapshot.js';
import type { SessionEvent, SessionOptions } from './types.js';

/** What settling the working tree needs from the session. */
export interface WorktreeContext {
  run: string;
  root: string;
  record: RunRecord;
  history: History;
  snapshotter: WorktreeSnapshotter;
  /** Puts this machine's secret values back into restored text files. */
  reveal?: RevealText;
  /** The journal store, to find runs that finished since this run's checkpoint. */
  store: JournalStore;
  /** Keeps a tree this process wrote reachable until a commit references it (a concurrent gc must not prune it). */
  keepReachable: (tree: string) => Promise<void>;
  options: Pick<SessionOptions, 'worktree' | 'onDrift'>;
  /** Keep the person's changes when neither a flag nor a clean checkout decides: a session's message, `continue`. */
  keepByDefault?: boolean;
  /**
   * Subagents of the run's task steps that are not recorded yet (a crash while they worked) hold
   * work of their own in the tree, past the run's last checkpoint: kept, as a step in flight's is.
   */
  subagentsUnderway?: boolean;
  emit: (event: SessionEvent) => void;
}

/** What the run goes on with: the person's own changes it keeps (the model is told of them, the tree is the next checkpoint). */
export interface SettledWorktree {
  personChanges: FileChange[];
}

type RestoreReason = Extract<SessionEvent, { type: 'worktree-restored' }>['reason'];

/** Compares the working tree with the run's last checkpoint and restores, keeps or stops (DriftError). */
export async function settleWorktree(context: WorktreeContext): Promise<SettledWorktree> {
  const { record, history, snapshotter } = context;
  const last = history.lastCheckpoint ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
  if (!last) return { personChanges: [] };
  const found = await findDrift(snapshotter.objects, snapshotter, last.tree, last.step, record.baseCommit);
  if (!found) return { personChanges: [] };
  await context.keepReachable(found.current.tree); // its objects are reused, it is never committed
  const { worktree, onDrift } = context.options;
  const none: SettledWorktree = { personChanges: [] };
  // A fresh clone holds nothing of the person's: everything is put back.
  if (found.cleanBase) {
    await restore(context, found, worktree === 'restore' ? 'flag' : 'clean-base');
    return none;
  }
  const drift = await settleFork(context, found);
  if (!drift) return none;
  // The step in flight at the crash may have made these changes itself: keep them, and say so
  // (the model is told of that step's unknown outcome, not of changes that may be its own).
  if ((history.inFlight || context.subagentsUnderway) && worktree !== 'restore') {
    context.emit({
      type: 'worktree-kept',
      reason: worktree === 'keep' ? 'flag' : history.inFlight ? 'in-flight' : 'subagents',
      step: drift.step,
      changes: drift.changes,
    });
    return none;
  }
  const decision =
    worktree ??
    (context.keepByDefault ? 'keep' : onDrift ? await onDrift({ run: context.run, step: drift.step, changes: drift.changes }) : 'stop');
  if (decision === 'stop') throw new DriftError(context.run, drift.step, drift.changes);
  if (decision === 'keep') {
    context.emit({
      type: 'worktree-kept',
      reason: worktree ? 'flag' : context.keepByDefault ? 'default' : 'chosen',
      step: drift.step,
      changes: drift.changes,
    });
    return { personChanges: drift.changes };
  }
  const wrote = await filesTheRunWrote(snapshotter.objects, await startOf(context), history.checkpoints);
  const result = await restore(context, drift, worktree ? 'flag' : 'chosen', { only: (path) => wrote.has(path) });
  // What the restore left is the person's (files the run never wrote): the run goes on with it. A
  // file it could not name (a secret this machine lacks) is not the person's doing: nothing to tell.
  const left = await findDrift(snapshotter.objects, snapshotter, drift.checkpoint, drift.step);
  if (left) await context.keepReachable(left.current.tree);
  const unnamed = new Set(result.unrestorable);
  return { personChanges: (left?.changes ?? []).filter((change) => !unnamed.has(change.path)) };
}

// A fork that has not gone live yet starts on its parent's files at the fork point: the files the
// parent wrote after it are put back (set aside first), with no question. Returns what differs then.
async function settleFork(context: WorktreeContext, drift: Drift): Promise<Drift | undefined> {
  const { record, snapshotter, store } = context;
  const lineage = record.lineage;
  if (!lineage || !('forkedFrom' in lineage) || record.attempts.length > 0) return drift;
  const parent = (await readRunEntries(store, lineage.forkedFrom).catch(() => [])).filter(
    (e) => e.phase === 'result' && e.step >= lineage.atStep && e.checkpoint,
  );
  const trail = parent.map((e) => ({ tree: e.checkpoint!, person: e.kind === 'user' }));
  const later = await filesTheRunWrote(snapshotter.objects, record.startCheckpoint, trail);
  if (!drift.changes.some((change) => later.has(change.path))) return drift;
  await restore(context, drift, 'fork', { only: (path) => later.has(path) });
  const rest = await findDrift(snapshotter.objects, snapshotter, drift.checkpoint, drift.step);
  if (rest) await context.keepReachable(rest.current.tree);
  return rest;
}

// The tree the run began on: its own start, or for a fork its parent's (the steps it inherited wrote from there).
async function startOf(context: WorktreeContext): Promise<string | undefined> {
  const { lineage, startCheckpoint } = context.record;
  if (!lineage || !('forkedFrom' in lineage)) return startCheckpoint;
  return (await readRunRecord(context.store, lineage.forkedFrom).catch(() => undefined))?.startCheckpoint ?? startCheckpoint;
}

async function restore(
  context: WorktreeContext,
  drift: Drift,
  reason: RestoreReason,
  limits: Pick<RestoreLimits, 'only'> = {},
): Promise<RestoreResult> {
  const { snapshotter, record } = context;
  // A restore never undoes edits of a run that finished after this run's checkpoint was recorded
  // (or adopted: a fork takes its parent's checkpoint when it is created).
  const checkpointAt = context.history.lastCheckpoint?.finishedAt ?? record.createdAt;
  const since = checkpointAt > record.createdAt ? checkpointAt : record.createdAt;
  const guard = (changes: Parameters<typeof refuseUndoingFinishedRuns>[4]) =>
    refuseUndoingFinishedRuns(context.store, context.run, drift.checkpoint, since, changes);
  let saved: SetAside | undefined;
  const setAside = (paths: string[]) => {
    saved = setAsideFiles(
      context.store.repo,
      context.run,
      paths,
      `savepoint: ${paths.length} file(s) set aside before restoring run ${context.run} ${drift.step ? `to step ${drift.step}` : 'to its start'}`,
    );
  };
  const result = await restoreWorktree(
    context.root,
    snapshotter.objects,
    drift.checkpoint,
    drift.current,
    snapshotter.trackedBlobs(),
    guard,
    context.reveal,
    snapshotter.recordName,
    snapshotter.filters,
    { ...limits, setAside },
  );
  context.emit({
    type: 'worktree-restored',
    reason,
    step: drift.step,
    ...result,
    ...(saved ? { saved: { ref: saved.ref, files: saved.files, command: saved.command } } : {}),
  });
  return result;
}
