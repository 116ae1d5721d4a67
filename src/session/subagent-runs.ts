// Which subagents of a run the journal holds past a point: after a crash, the subagents of the
// parent's task steps not yet recorded have worked on the tree beyond the parent's last checkpoint.
import type { JournalStore } from '../journal/store.js';
import { subagentRunId } from '../journal/run-id.js';

// How far past the last recorded step a task call of the same answer may sit (an answer's calls).
const ANSWER_REACH = 64;

/** Whether the journal holds a subagent of `run` started by a task step after `lastPosition` (not recorded in the parent). */
export async function subagentsUnderway(store: JournalStore, run: string, lastPosition: number): Promise<boolean> {
  await store.refresh();
  const runs = await store.treeAt('runs');
  if (!runs) return false;
  for (let step = lastPosition + 1; step <= lastPosition + ANSWER_REACH; step++) if (runs.has(subagentRunId(run, step))) return true;
  return false;
}
