/**
 * Where things live on the `agent-journal` branch. Pure code. Step files are sharded 100 to a
 * directory so that no tree grows large: every append rewrites the trees on its path, and small
 * trees keep that cost flat however long the run gets.
 */
export const JOURNAL_REF = 'refs/heads/agent-journal';
/** How many steps share one shard directory of a run, so that every tree stays small. */
export const STEPS_PER_SHARD = 100;

/** An entry's phase: the intent recorded before a step runs, or its result. */
export type Phase = 'intent' | 'result';

/** `runs/<run>/run.json` */
export function runRecordPath(run: string): string {
  return `runs/${run}/run.json`;
}

/** `000` for steps 0–99, `001` for 100–199, ... */
export function shardName(step: number): string {
  return String(Math.floor(step / STEPS_PER_SHARD)).padStart(3, '0');
}

/** `000004-run_bash.json`, or `000004-run_bash.intent.json` (sorts just before its result). */
export function stepFileName(step: number, kind: string, phase: Phase): string {
  return `${String(step).padStart(6, '0')}-${kind}${phase === 'intent' ? '.intent' : ''}.json`;
}

/** `runs/<run>/blobs/<id>`: bytes a step's result names by their git blob id (an image read). */
export function runBlobPath(run: string, oid: string): string {
  return `runs/${run}/blobs/${oid}`;
}

/** `runs/<run>/steps/000/000004-run_bash.json` */
export function stepFilePath(run: string, step: number, kind: string, phase: Phase): string {
  return `runs/${run}/steps/${shardName(step)}/${stepFileName(step, kind, phase)}`;
}

/** The inverse of stepFileName; undefined for a name that is not a step file. */
export function parseStepFileName(name: string): { step: number; kind: string; phase: Phase } | undefined {
  const match = /^(\d{6,})-([A-Za-z][A-Za-z0-9_-]*?)(\.intent)?\.json$/.exec(name);
  if (!match) return undefined;
  return { step: Number(match[1]), kind: match[2]!, phase: match[3] ? 'intent' : 'result' };
}
