// Checking a run.json read back from the branch, the way entry.ts checks an entry: every field a
// command uses is validated here, so a damaged or hand-edited run.json is reported, never used.
// Pure code: no fs, no git.
import { CorruptEntryError } from '../errors/index.js';
import { ATTEMPT_ENDS, isValidRunId, RUN_FORMAT, type AttemptEnd, type RunRecord } from './entry.js';
import { checkCount, checkString, isObject, MAX_TEXT_CHARS, optionalFlag, optionalObjectId, type Fail } from './fields.js';
/** Parses and checks a run.json. */
export function parseRunRecord(text: string, path: string): RunRecord {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new CorruptEntryError(path, `it is not valid JSON (${(error as Error).message})`);
  }
  const fail = (reason: string): never => {
    throw new CorruptEntryError(path, reason);
  };
  if (typeof value !== 'object' || value === null) fail('it is not a JSON object');
  if (value.format !== RUN_FORMAT) fail(`its format is ${JSON.stringify(value.format)}, expected "${RUN_FORMAT}"`);
  if (typeof value.id !== 'string' || typeof value.task !== 'string') fail('its id or task is missing');
  if (value.prompt !== undefined && typeof value.prompt !== 'string') fail('its prompt is not text');
  if (!['running', 'finished', 'failed'].includes(value.status as string)) fail(`its status ${JSON.stringify(value.status)} is unknown`);
  if (!Array.isArray(value.attempts)) fail('its attempts list is missing');
  if (!isValidRunId(value.id as string)) fail(`its id ${JSON.stringify((value.id as string).slice(0, 120))} is not a run id`);
  const dirRun = /^runs\/([^/]+)\/run\.json$/.exec(path)?.[1];
  if (dirRun !== undefined && dirRun !== value.id) fail(`it names run ${JSON.stringify(value.id)} but sits under run ${dirRun}`);
  checkRunFields(value, fail);
  for (const attempt of value.attempts as Array<Record<string, unknown> | null>) {
    if (typeof attempt !== 'object' || attempt === null) fail('an attempt is not an object');
    const end = attempt!.end as Record<string, unknown> | null | undefined;
    if (end === undefined) continue;
    if (typeof end !== 'object' || end === null || !ATTEMPT_ENDS.includes(end.how as AttemptEnd['how']) || typeof end.at !== 'string')
      fail(`attempt ${String(attempt!.number)} has an end that is not one of ${ATTEMPT_ENDS.join(', ')}`);
    if ((end!.error !== undefined && typeof end!.error !== 'string') || (end!.limit !== undefined && typeof end!.limit !== 'string'))
      fail(`attempt ${String(attempt!.number)}'s end has an error or limit that is not text`);
    optionalObjectId(end!, 'head', fail);
  }
  if (value.config !== undefined) {
    const c = value.config as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null) fail('its config is not an object');
    if (typeof c!.model !== 'string' || typeof c!.system !== 'string' || !Array.isArray(c!.tools) || typeof c!.maxTokens !== 'number')
      fail('its config lacks the model, system prompt, tools or max tokens');
    if (typeof c!.compaction !== 'object' || c!.compaction === null) fail('its config lacks the compaction settings');
  }
  return value as unknown as RunRecord;
}

// Every field of run.json a command uses: object ids that reach git's command line, names and
// texts that are printed, numbers that are counted with.
function checkRunFields(run: Record<string, unknown>, fail: Fail): void {
  checkString(run, 'task', fail, { max: MAX_TEXT_CHARS });
  checkString(run, 'model', fail, { optional: true });
  optionalObjectId(run, 'baseCommit', fail);
  optionalObjectId(run, 'startCheckpoint', fail);
  checkString(run, 'worktree', fail, { optional: true });
  checkString(run, 'branch', fail, { optional: true, nullable: true });
  checkString(run, 'createdAt', fail);
  checkString(run, 'updatedAt', fail);
  checkString(run, 'final', fail, { optional: true, max: MAX_TEXT_CHARS });
  checkString(run, 'error', fail, { optional: true, max: MAX_TEXT_CHARS });
  if (run.refused !== undefined && typeof run.refused !== 'boolean') fail('its refused mark is not true or false');
  if (run.lineage !== undefined && run.lineage !== null) {
    if (!isObject(run.lineage)) fail('its lineage is not an object');
    const lineage = run.lineage as Record<string, unknown>;
    if ('parentRun' in lineage) {
      if (typeof lineage.parentRun !== 'string' || !isValidRunId(lineage.parentRun)) fail('its lineage does not name a run id');
      checkCount(lineage, 'parentStep', fail);
      checkString(lineage, 'description', fail, { max: MAX_TEXT_CHARS });
    } else if ('previousRun' in lineage) {
      if (typeof lineage.previousRun !== 'string' || !isValidRunId(lineage.previousRun)) fail('its lineage does not name a run id');
    } else {
      if (typeof lineage.forkedFrom !== 'string' || !isValidRunId(lineage.forkedFrom)) fail('its lineage does not name a run id');
      checkCount(lineage, 'atStep', fail);
    }
  }
  for (const attempt of run.attempts as unknown[]) {
    if (!isObject(attempt)) fail('its attempts list holds something that is not an object');
    const a = attempt as Record<string, unknown>;
    checkCount(a, 'number', fail);
    checkString(a, 'startedAt', fail);
    checkString(a, 'host', fail);
    checkCount(a, 'pid', fail);
    checkCount(a, 'firstLiveStep', fail);
    if (a.rerun !== undefined) checkCount(a, 'rerun', fail);
    if (a.killed !== undefined) {
      if (!isObject(a.killed)) fail("an attempt's killed note is not an object");
      checkString(a.killed as Record<string, unknown>, 'noticedAt', fail);
      checkCount(a.killed as Record<string, unknown>, 'noticedBy', fail);
    }
    checkString(a, 'worktree', fail, { optional: true });
    checkString(a, 'interruptedAt', fail, { optional: true });
    if (a.sandbox !== undefined) checkSandbox(a.sandbox, fail);
  }
  if (run.sandbox !== undefined) checkSandbox(run.sandbox, fail);
  if (run.totals !== undefined) {
    if (!isObject(run.totals)) fail('its totals are not an object');
    const t = run.totals as Record<string, unknown>;
    for (const key of ['files', 'lastStep', 'modelCalls']) checkCount(t, key, fail);
    if (!isObject(t.tokens)) fail('its totals lack the tokens');
    for (const key of ['input', 'output', 'cacheCreation', 'cacheRead']) checkCount(t.tokens as Record<string, unknown>, key, fail);
    checkString(t, 'lastActivity', fail, { nullable: true });
    optionalFlag(t, 'inFlight', fail);
  }
}

function checkSandbox(sandbox: unknown, fail: Fail): void {
  if (!isObject(sandbox)) fail('its sandbox is not an object');
  const s = sandbox as Record<string, unknown>;
  if (s.kind !== 'bwrap' && s.kind !== 'none') fail(`its sandbox kind ${JSON.stringify(s.kind)} is unknown`);
  optionalFlag(s, 'network', fail);
  optionalFlag(s, 'gitWrites', fail);
}
