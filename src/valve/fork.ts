// Forking a run: a new run whose first steps are the old run's steps before a given step, with the
// working-tree checkpoint it had there, and its lineage recorded. Resuming the fork replays those
// steps and goes live at the fork point: the way on after a divergence, or to try another path.
import { UnknownRunError, UsageError } from '../errors/index.js';
import { ENTRY_FORMAT, RUN_FORMAT, isValidRunId, serializeEntry, type RunRecord } from '../journal/entry.js';
import { runRecordPath, stepFilePath } from '../journal/layout.js';
import { listRunIds, readRunEntries, readRunRecord } from '../journal/reader.js';
import type { JournalFile, JournalStore } from '../journal/store.js';
import { countTotals } from './run-totals.js';
import { TREE_MODE } from '../git/git-object.js';

/** What forking a run made: the new run.json, the steps it starts with, and its checkpoint. */
export interface ForkResult {
  record: RunRecord;
  /** How many finished steps the fork starts with. */
  steps: number;
  checkpoint?: string;
}

/** Creates run `newId` from the steps of `from` before step `atStep`, in one commit. */
export async function forkRun(store: JournalStore, from: string, atStep: number, newId: string): Promise<ForkResult> {
  const source = await readRunRecord(store, from);
  if (!source) throw new UnknownRunError(from);
  if (!isValidRunId(newId)) throw new UsageError(`"${newId}" is not a valid run id: use letters, digits, ".", "_" or "-".`);
  if ((await listRunIds(store)).includes(newId)) throw new UsageError(`Run ${newId} already exists: choose another id with --run.`);
  const entries = await readRunEntries(store, from);
  const last = entries.reduce((max, e) => Math.max(max, e.step), 0);
  if (!Number.isInteger(atStep) || atStep < 1 || atStep > last + 1) {
    throw new UsageError(`--at must be a step of run ${from} from 1 to ${last + 1} (the fork keeps the steps before it), not ${atStep}.`);
  }
  // Finished steps only: an intent with no result at the fork point is the old run's business.
  const finished = new Set(entries.filter((e) => e.phase === 'result' && e.step < atStep).map((e) => e.step));
  const kept = entries.filter((e) => finished.has(e.step));
  const checkpoint = [...kept].reverse().find((e) => e.checkpoint)?.checkpoint ?? source.startCheckpoint;
  const now = new Date().toISOString();
  const record: RunRecord = {
    format: RUN_FORMAT,
    id: newId,
    task: source.task,
    ...(source.prompt !== undefined ? { prompt: source.prompt } : {}),
    model: source.model,
    baseCommit: source.baseCommit,
    createdAt: now,
    updatedAt: now,
    status: 'running',
    lineage: { forkedFrom: from, atStep },
    ...(checkpoint ? { startCheckpoint: checkpoint } : {}),
    attempts: [],
    // The fork sends what its parent sent: same prompt, tools, limits and model.
    ...(source.config ? { config: source.config } : {}),
    totals: countTotals(kept),
  };
  const files: JournalFile[] = [{ path: runRecordPath(newId), content: serializeEntry(record) }];
  // Copied entries keep everything but their run; attempt 0 marks them as inherited from the parent.
  for (const entry of kept) {
    files.push({
      path: stepFilePath(newId, entry.step, entry.kind, entry.phase),
      content: serializeEntry({ ...entry, format: ENTRY_FORMAT, run: newId, attempt: 0 }),
    });
  }
  if (checkpoint) files.push({ path: `runs/${newId}/worktree`, tree: checkpoint });
  // The bytes the kept results name (images read), so the fork holds what it replays.
  const blobs = (await store.treeAt(`runs/${from}`))?.get('blobs');
  if (blobs?.mode === TREE_MODE) files.push({ path: `runs/${newId}/blobs`, tree: blobs.oid });
  await store.append(files, `${newId} forked from ${from} at #${atStep} (${finished.size} steps kept)`);
  return { record, steps: finished.size, checkpoint };
}
