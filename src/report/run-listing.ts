// Listing a run without reading its entries: run.json's totals (RunRecord.totals, which the valve
// writes at a process's first live step, at Ctrl-C and at the end) and the names of its entry files
// (its shard trees) say everything `savepoint runs` shows but the follow-up messages, which the few
// user steps' entries give. Totals are trusted only while they still count exactly the files
// listed: a process killed between steps appended entries after its run.json, and such a run is
// summarized from its entries as before. Pure code.
import type { RunRecord, RunTotals } from '../journal/entry.js';
import type { Phase } from '../journal/layout.js';
import { isModelKind, latest, runSummary } from './summarize.js';
import type { RunContext, RunSummary } from './summary-types.js';

/** An entry file as its name describes it (see listRunStepFiles). */
export interface ListedFile {
  step: number;
  kind: string;
  phase: Phase;
}

/** A step as its file names show it: the file its view is built from (its result, else its intent). */
export interface ListedStep<F extends ListedFile> {
  step: number;
  shown: F;
  finished: boolean;
}

/** The steps `files` (in step order) hold, in step order; at one step a later file of a phase wins, as in the timeline. */
export function listedSteps<F extends ListedFile>(files: readonly F[]): Array<ListedStep<F>> {
  const positions = new Map<number, { intent?: F; result?: F }>();
  for (const file of files) {
    const position = positions.get(file.step) ?? {};
    position[file.phase] = file;
    positions.set(file.step, position);
  }
  return [...positions.entries()]
    .sort(([a], [b]) => a - b)
    .map(([step, p]) => ({ step, shown: (p.result ?? p.intent)!, finished: p.result !== undefined }));
}

/**
 * run.json's totals when they still add up the entries `files` lists, else undefined (count the
 * entries). Entry files are only ever added, so the same number of files, the same last step, the
 * same in-flight state and the same finished model turns mean the totals counted these very files.
 */
export function trustedTotals<F extends ListedFile>(
  record: RunRecord | undefined,
  files: readonly F[],
  steps: ReadonlyArray<ListedStep<F>> = listedSteps(files),
): RunTotals | undefined {
  const totals = record?.totals;
  if (!isTotals(totals) || totals.files !== files.length) return undefined;
  // Two files of one phase at one step (two kinds) are not what the totals' sum means: count entries.
  if (new Set(files.map((f) => `${f.step}:${f.phase}`)).size !== files.length) return undefined;
  const last = steps.at(-1);
  if (totals.lastStep !== (last?.step ?? 0) || totals.inFlight !== (last !== undefined && !last.finished)) return undefined;
  // Totals written before compactions counted as model calls count only turns: such a run with a
  // compaction is counted from its entries.
  if (totals.modelCalls !== files.filter((f) => f.phase === 'result' && isModelKind(f.kind)).length) return undefined;
  return totals;
}

/** The files that hold the run's follow-up messages (its user steps'), in order, of its listedSteps. */
export function followUpFiles<F extends ListedFile>(steps: ReadonlyArray<ListedStep<F>>): F[] {
  return steps.filter((s) => s.shown.kind === 'user').map((s) => s.shown);
}

/** The summary of a run from its run.json, its trusted totals, its listedSteps and its follow-ups' messages. */
export function summaryFromTotals(
  id: string,
  record: RunRecord,
  totals: RunTotals,
  steps: ReadonlyArray<ListedStep<ListedFile>>,
  followUps: string[],
  context: RunContext,
): RunSummary {
  const { input, output, cacheCreation, cacheRead } = totals.tokens;
  return runSummary(
    id,
    record,
    {
      steps: steps.length,
      modelCalls: steps.filter((s) => s.finished && isModelKind(s.shown.kind)).length,
      tokens: { input, output, cacheCreation, cacheRead },
      lastInFlight: steps.at(-1)?.finished === false,
      followUps,
      lastActivity: latest([record.updatedAt, totals.lastActivity]) ?? null,
    },
    context,
  );
}

// run.json is a file anyone can edit: totals of another shape are not trusted.
function isTotals(value: unknown): value is RunTotals {
  if (typeof value !== 'object' || value === null) return false;
  const t = value as Record<string, unknown>;
  const tokens = t.tokens as Record<string, unknown> | null | undefined;
  const count = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return (
    count(t.files) &&
    count(t.lastStep) &&
    count(t.modelCalls) &&
    typeof t.inFlight === 'boolean' &&
    (t.lastActivity === null || typeof t.lastActivity === 'string') &&
    typeof tokens === 'object' &&
    tokens !== null &&
    ['input', 'output', 'cacheCreation', 'cacheRead'].every((k) => typeof tokens[k] === 'number')
  );
}
