// A run's line in `savepoint runs` from the totals its run.json carries (RunRecord.totals), without
// reading its entries: a thousand runs list in well under a second. The totals are trusted only
// while the run still has exactly the entry files they counted (its step trees are listed, which
// reads no entry); anything else (a run written before totals existed, a fork, a run still being
// written, a copy in several journals) is summarized from its entries as before.
import type { RunRecord } from '../journal/entry.js';
import { TREE_MODE } from '../journal/objects.js';
import type { JournalStore } from '../journal/store.js';
import type { RunContext, RunSummary } from './summarize.js';

/** The summary of run `id` from its recorded totals, or undefined when they cannot be trusted. */
export async function summaryFromTotals(store: JournalStore, id: string, record: RunRecord | undefined, context: RunContext): Promise<RunSummary | undefined> {
  const totals = record?.totals;
  if (!record || !totals || context.diverged) return undefined;
  const counted = await countEntryFiles(store, id);
  if (!counted || counted.files !== totals.files || counted.lastStep !== totals.lastStep) return undefined;
  const status = context.running
    ? 'running'
    : record.status === 'finished' || record.status === 'failed'
      ? record.status
      : totals.inFlight
        ? 'in-flight'
        : 'interrupted';
  const latest = [record.updatedAt, totals.lastActivity].filter((t): t is string => Boolean(t) && !Number.isNaN(Date.parse(t!)));
  return {
    id,
    task: record.task ?? '',
    status,
    recordedStatus: record.status,
    model: record.model ?? null,
    steps: totals.lastStep,
    modelCalls: totals.modelCalls,
    tokens: { ...totals.tokens },
    resumes: Math.max(0, record.attempts.length - 1),
    lineage: record.lineage ?? null,
    createdAt: record.createdAt ?? null,
    lastActivity: latest.sort((a, b) => Date.parse(b) - Date.parse(a))[0] ?? null,
    shownFrom: context.shownFrom ?? 'local',
    sources: context.sources ?? [context.shownFrom ?? 'local'],
  };
}

// How many entry files a run has and its highest step, from its step trees alone.
async function countEntryFiles(store: JournalStore, id: string): Promise<{ files: number; lastStep: number } | undefined> {
  const shards = await store.treeAt(`runs/${id}/steps`);
  if (!shards) return { files: 0, lastStep: 0 };
  let files = 0;
  let lastStep = 0;
  for (const shard of shards.values()) {
    if (shard.mode !== TREE_MODE) return undefined;
    for (const name of (await store.tree(shard.oid)).keys()) {
      const step = Number.parseInt(name, 10);
      if (!Number.isInteger(step)) return undefined;
      files++;
      lastStep = Math.max(lastStep, step);
    }
  }
  return { files, lastStep };
}
