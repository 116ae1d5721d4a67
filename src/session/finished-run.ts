// A finished run replays its final answer, which is about the repository as the run left it: HEAD
// where it was when the run finished, and the files of its last checkpoint. Before it is shown:
//   - finishedRunChanges says which files changed since (the CLI prints them before the answer;
//     --json's final event carries them), for a replay the person asked for by id;
//   - finishedRunMoved says whether the repository moved on at all (a new commit, other files):
//     then the identical `run` is a new piece of work, and starts a new run of the same task.
import type { FileChange } from '../errors/index.js';
import type { RunRecord } from '../journal/entry.js';
import { readHeadCommit } from '../git/refs.js';
import type { Repository } from '../git/repository.js';
import type { RunJournal } from '../valve/run-journal.js';
import { findDrift } from '../worktree/drift.js';
import type { WorktreeSnapshotter } from '../worktree/snapshot.js';

/**
 * How the working tree differs from a finished run's last checkpoint (or its start, when it changed
 * no file), or undefined when it does not (or it cannot be told).
 */
export async function finishedRunChanges(
  record: RunRecord,
  journal: RunJournal,
  snapshotter: WorktreeSnapshotter,
): Promise<{ step: number; changes: FileChange[] } | undefined> {
  const last = journal.history.lastCheckpoint ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
  if (!last) return undefined;
  const drift = await findDrift(snapshotter.objects, snapshotter, last.tree, last.step).catch(() => undefined);
  return drift && drift.changes.length ? { step: drift.step, changes: drift.changes } : undefined;
}

/** How the repository moved on since a run finished: HEAD's new commit (from where the run left it), and files changed since its last checkpoint. */
export interface MovedOn {
  /** HEAD is another commit than when the run finished (`from`: undefined for a run older than that record, which had no commit yet). */
  commit?: { from?: string; to?: string };
  changes: FileChange[];
}

/** Whether the repository moved on since finished run `record` ended there, and how; undefined when HEAD and the files are as it left them. */
export async function finishedRunMoved(
  record: RunRecord,
  journal: RunJournal,
  snapshotter: WorktreeSnapshotter,
  repo: Repository,
): Promise<MovedOn | undefined> {
  const head = readHeadCommit(repo.gitdir, repo.commonDir);
  // Where HEAD was when the run last finished. A run recorded before that was noted (an older build)
  // is judged by its base commit alone: its files may be a fresh clone's (another machine), which
  // replays as it always did, with the files that differ named.
  const left = [...record.attempts].reverse().find((attempt) => attempt.end?.how === 'finished')?.end?.head;
  const since = left ?? record.baseCommit;
  const changed = left ? await finishedRunChanges(record, journal, snapshotter) : undefined;
  if (head === since && !changed) return undefined;
  return { ...(head !== since ? { commit: { from: since, to: head } } : {}), changes: changed?.changes ?? [] };
}
