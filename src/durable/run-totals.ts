// Adding up a run's entries for its run.json (RunRecord.totals), so `savepoint runs` can list a
// thousand runs without reading every entry of every one. Pure code.
import type { JournalEntry, RunTotals } from '../journal/entry.js';

/** The totals of a run whose entries are `entries` (in journal order). */
export function countTotals(entries: readonly JournalEntry[]): RunTotals {
  const tokens = { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 };
  const results = new Set<number>();
  let modelCalls = 0;
  let lastStep = 0;
  let lastActivity: string | null = null;
  let latest = Number.NEGATIVE_INFINITY;
  for (const entry of entries) {
    lastStep = Math.max(lastStep, entry.step);
    for (const time of [entry.startedAt, entry.finishedAt]) {
      const at = time ? Date.parse(time) : Number.NaN;
      if (at > latest) [latest, lastActivity] = [at, time!];
    }
    if (entry.phase !== 'result') continue;
    results.add(entry.step);
    if (entry.kind === 'model') modelCalls++;
    if (entry.usage) {
      tokens.input += entry.usage.inputTokens ?? 0;
      tokens.output += entry.usage.outputTokens ?? 0;
      tokens.cacheCreation += entry.usage.cacheCreationInputTokens ?? 0;
      tokens.cacheRead += entry.usage.cacheReadInputTokens ?? 0;
    }
  }
  return { files: entries.length, lastStep, modelCalls, tokens, lastActivity, inFlight: lastStep > 0 && !results.has(lastStep) };
}
