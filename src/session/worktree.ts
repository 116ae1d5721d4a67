// Before a resumed run goes live: the working tree must be what the journal last recorded, since
// the replayed steps assume the files as the run left them. SPEC's drift rules, as decisions: a
// clean checkout of the run's base commit (a fresh clone) is restored from the checkpoint at once;
// otherwise the caller's flag or callback chooses restore, keep or stop. No terminal here.
import type { History } from '../valve/history.js';
import type { RunRecord } from '../journal/entry.js';
import type { JournalStore } from '../journal/store.js';
import { DriftError } from '../errors/index.js';
import { findDrift, type Drift } from '../worktree/drift.js';
import { refuseUndoingFinishedRuns } from '../worktree/drift.js';
import { restoreWorktree, type RevealText } from '../worktree/restore.js';
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
  emit: (event: SessionEvent) => void;
}

/** Compares the working tree with the run's last checkpoint and restores, keeps or stops (DriftError). */
export async function settleWorktree(context: WorktreeContext): Promise<void> {
  const { record, history, snapshotter } = context;
  const last = history.lastCheckpoint ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
  if (!last) return;
  const drift = await findDrift(snapshotter.objects, snapshotter, last.tree, last.step, record.baseCommit);
  if (!drift) return;
  await context.keepReachable(drift.current.tree); // its objects are reused, it is never committed
  const { worktree, onDrift } = context.options;
  if (worktree === 'restore') return restore(context, drift, 'flag');
  if (drift.cleanBase) return restore(context, drift, 'clean-base');
  if (worktree === 'keep') return context.emit({ type: 'worktree-kept', reason: 'flag', step: drift.step, changes: drift.changes });
  // The step in flight at the crash may have made these changes itself: keep them, and say so.
  if (history.inFlight) return context.emit({ type: 'worktree-kept', reason: 'in-flight', step: drift.step, changes: drift.changes });
  const decision = onDrift ? await onDrift({ run: context.run, step: drift.step, changes: drift.changes }) : 'stop';
  if (decision === 'restore') return restore(context, drift, 'chosen');
  if (decision === 'keep') return context.emit({ type: 'worktree-kept', reason: 'chosen', step: drift.step, changes: drift.changes });
  throw new DriftError(context.run, drift.step, drift.changes);
}

async function restore(context: WorktreeContext, drift: Drift, reason: 'flag' | 'clean-base' | 'chosen'): Promise<void> {
  const { snapshotter, record } = context;
  // A restore never undoes edits of a run that finished after this run's checkpoint was recorded
  // (or adopted: a fork takes its parent's checkpoint when it is created).
  const checkpointAt = context.history.lastCheckpoint?.finishedAt ?? record.createdAt;
  const since = checkpointAt > record.createdAt ? checkpointAt : record.createdAt;
  const guard = (changes: Parameters<typeof refuseUndoingFinishedRuns>[4]) => refuseUndoingFinishedRuns(context.store, context.run, drift.checkpoint, since, changes);
  const result = await restoreWorktree(context.root, snapshotter.objects, drift.checkpoint, drift.current, snapshotter.trackedBlobs(), guard, context.reveal, snapshotter.recordName, snapshotter.filters);
  context.emit({ type: 'worktree-restored', reason, step: drift.step, ...result });
}
