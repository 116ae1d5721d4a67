// A finished run replays its final answer, which is about the files as the run left them: before
// it is shown, the working tree is compared with the run's last checkpoint, so the user hears
// which files changed since (the CLI prints them before the answer; --json's final event carries them).
import type { FileChange } from '../errors/index.js';
import type { RunRecord } from '../journal/entry.js';
import type { RunJournal } from '../valve/run-journal.js';
import { findDrift } from '../worktree/drift.js';
import type { WorktreeSnapshotter } from '../worktree/snapshot.js';

/**
 * How the working tree differs from a finished run's last checkpoint (or its start, when it changed
 * no file), or undefined when it does not (or it cannot be told).
 */
export async function finishedRunChanges(record: RunRecord, journal: RunJournal, snapshotter: WorktreeSnapshotter): Promise<{ step: number; changes: FileChange[] } | undefined> {
  const last = journal.history.lastCheckpoint ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
  if (!last) return undefined;
  const drift = await findDrift(snapshotter.objects, snapshotter, last.tree, last.step).catch(() => undefined);
  return drift && drift.changes.length ? { step: drift.step, changes: drift.changes } : undefined;
}
