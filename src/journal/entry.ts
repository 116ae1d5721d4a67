// The journal's records, as JSON files on the branch. Pure code: no fs, no git. Every entry read
// back is validated here, so a damaged or hand-edited file is reported, never half-replayed.
import { CorruptEntryError } from '../errors/index.js';
import { checkCount, checkString, isObject, MAX_TEXT_CHARS, optionalAmount, optionalObjectId, type Fail } from './fields.js';

/** The format tag of every journal entry file. */
export const ENTRY_FORMAT = 'savepoint/entry@1';
/** The format tag of every run.json. */
export const RUN_FORMAT = 'savepoint/run@1';

/** Token usage of a model call, as the provider reported it. */
export interface EntryUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens?: number;
  cacheReadInputTokens?: number;
}

/**
 * One step's record. An `intent` entry is written before a step that is not safe to repeat; the
 * `result` entry after it finished. A step with an intent and no result was in flight at a crash.
 */
export interface JournalEntry {
  format: typeof ENTRY_FORMAT;
  run: string;
  step: number;
  kind: string;
  phase: 'intent' | 'result';
  /** Deterministic identity of the call: kind + digest of its canonical input. */
  key: string;
  /** What the step does, for people: `run_bash "npm test"`. */
  description: string;
  input: unknown;
  result?: unknown;
  /** A one-line result for people: `exit 1: 1 failed, 4 passed`. */
  summary?: string;
  /** How the result came about when it is not a plain live run: e.g. `in-flight-reported`. */
  resolution?: string;
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  usage?: EntryUsage;
  /** The working tree after this step, as a git tree id (steps that may change files). */
  checkpoint?: string;
  /** Files left out of that checkpoint (too large), so nothing is dropped silently. */
  checkpointSkipped?: Array<{ path: string; size: number; reason: string }>;
  /** Which attempt (1 = first process, 2 = first resume, ...) wrote this entry. */
  attempt: number;
  /**
   * The first and last positions of the group of calls of one answer that ran at the same time as
   * this step (several reads): until the group has finished, the journal may lack one of them.
   */
  batch?: [number, number];
}

/**
 * What shapes a model request and is not in the entries, pinned in run.json when a run is created,
 * so that a resumed or forked run (on a newer build, on another machine) sends exactly what it sent
 * before. Runs recorded before pinning have none: they use the build's values (and get them pinned
 * at their next write).
 */
export interface RunConfig {
  /** The model id (or `script:<file>`). */
  model: string;
  /** The whole system prompt, project instructions included. */
  system: string;
  /** The tool definitions the model is given, as sent. */
  tools: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  maxTokens: number;
  /** When the conversation is compacted: at `at` (a fraction) of `contextWindow` tokens, unless off. */
  compaction: { enabled: boolean; at: number; contextWindow: number };
  /** Extended thinking's token budget, when it is on. */
  thinking?: { budgetTokens: number };
  /** Where the project instructions in the system prompt came from (AGENTS.md, CLAUDE.md), if any. */
  instructions?: { file: string; chars: number };
  /** 'journal': the note in a cut output reads as savepoint 0.1.0 wrote it (runs recorded before pinning). */
  outputNote?: 'journal';
  /** The MCP tools among `tools`, listed from their servers when the run was created (src/tools/mcp/). */
  mcp?: PinnedMcpTool[];
  /** An MCP tool's images reach the model as image blocks; absent (runs recorded before): as the text line each was. */
  toolImages?: true;
}

/** An MCP tool pinned with a run: its name for the model, the server and tool it calls, and whether its annotations said read-only. */
export interface PinnedMcpTool {
  /** `mcp__<server>__<tool>`, as in the run's tool definitions. */
  name: string;
  server: string;
  tool: string;
  /** `readOnlyHint: true`: safe to repeat, no intent recorded, no approval asked. */
  readOnly: boolean;
  /** The annotations as the server gave them (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title). */
  annotations?: Record<string, unknown>;
}

/** A run's metadata, `runs/<id>/run.json`. */
export interface RunRecord {
  format: typeof RUN_FORMAT;
  id: string;
  /** What the person typed: the run's identity (its id derives from it). */
  task: string;
  /**
   * What the model was sent for the task when it differs from `task`: a custom command's text, the
   * files `@path` mentions brought. Recorded when the run is created, so a replay sends exactly
   * this, whatever the command or the files say now.
   */
  prompt?: string;
  model?: string;
  /** The user's HEAD when the run started. */
  baseCommit?: string;
  /**
   * Where the run was created: the working tree's root path and the branch HEAD was on (null:
   * detached). `savepoint runs` lists this worktree's runs; a finished run is not replayed elsewhere.
   */
  worktree?: string;
  branch?: string | null;
  createdAt: string;
  updatedAt: string;
  status: 'running' | 'finished' | 'failed';
  /**
   * Where the run comes from: forked from a run at a step (`savepoint fork`), or a new run of the same
   * task after `previousRun` finished on a repository that has moved on since (`run` starts it), or
   * a subagent: the run of `parentRun`'s `task` call at `parentStep`, given `description`.
   */
  lineage?: { forkedFrom: string; atStep: number } | { previousRun: string } | SubagentLineage | null;
  /** The working tree when the run was created, as a git tree id. */
  startCheckpoint?: string;
  /**
   * One per process that went live on this run, with how that process ran commands.
   * interruptedAt: when the attempt was stopped by Ctrl-C (a signal it handled), not by a crash;
   * worktree: the working tree's root it ran in; end: how it ended, when it lived to say so (an
   * attempt without one crashed, or is still running); rerun: the step left in flight by a crash
   * that this attempt ran again (`--in-flight rerun`), noted before it did, so an attempt killed
   * before it recorded anything still leaves its trace.
   */
  attempts: Array<{
    number: number;
    startedAt: string;
    host: string;
    pid: number;
    firstLiveStep: number;
    sandbox?: RunSandbox;
    worktree?: string;
    interruptedAt?: string;
    end?: AttemptEnd;
    rerun?: number;
    killed?: KilledNote;
  }>;
  /** How run_bash ran commands in the latest attempt. */
  sandbox?: RunSandbox;
  final?: string;
  /** The final answer was the model's refusal (stop reason "refusal"): the run ended, its task not done. */
  refused?: boolean;
  error?: string;
  /** What shapes its model requests (see RunConfig); absent in runs recorded before it was pinned. */
  config?: RunConfig;
  /**
   * What the run's entries add up to, counted when this run.json was written (a process's first
   * live step, Ctrl-C, the end, a fork), so that listing runs need not read every entry. Trusted
   * only while the run still has exactly `files` entry files (src/report/run-listing.ts).
   */
  totals?: RunTotals;
}

/**
 * An attempt that ran a step left in flight again and was killed before it recorded anything, as
 * the next attempt found it (its process could not say): when, and which attempt noticed.
 */
export interface KilledNote {
  noticedAt: string;
  noticedBy: number;
}

/** How one attempt ended, as the process that made it recorded: finished, stopped at a limit, interrupted by a signal, or failed. */
export interface AttemptEnd {
  how: 'finished' | 'limit' | 'interrupted' | 'failed';
  /** When (ISO 8601). */
  at: string;
  /** The limit that stopped it (`max-steps`, `max-turns`, `max-cost`), for `limit`. */
  limit?: string;
  /** The error that failed it, for `failed`. */
  error?: string;
  /** HEAD's commit when it finished (`finished`): a repository that moved on since makes the identical `run` a new run. */
  head?: string;
}

/** The `how` of every AttemptEnd. */
export const ATTEMPT_ENDS: readonly AttemptEnd['how'][] = ['finished', 'limit', 'interrupted', 'failed'];

/** A run's entries added up (see RunRecord.totals). */
export interface RunTotals {
  /** Entry files (intents and results) counted, and the run's last step then. */
  files: number;
  lastStep: number;
  /** Finished model calls (turns and compactions), and their token usage. */
  modelCalls: number;
  tokens: { input: number; output: number; cacheCreation: number; cacheRead: number };
  /** The latest start or finish time of any entry (ISO 8601). */
  lastActivity: string | null;
  /** The last step has an intent and no result. */
  inFlight: boolean;
}

/** How run_bash ran commands: in bubblewrap (with what it allowed), or unconfined. */
export interface RunSandbox {
  kind: 'bwrap' | 'none';
  network: boolean;
  gitWrites: boolean;
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const KIND = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Run ids become directory and file names: keep them to safe characters. */
export function isValidRunId(id: string): boolean {
  return RUN_ID.test(id) && !id.endsWith('.lock') && !id.includes('..');
}

/** A subagent's lineage: the parent run, the step of its `task` call, and the description that call gave. */
export interface SubagentLineage {
  parentRun: string;
  parentStep: number;
  description: string;
}

/** Whether a run.json's lineage makes the run a subagent of another run. */
export function isSubagentLineage(lineage: RunRecord['lineage']): lineage is SubagentLineage {
  return !!lineage && 'parentRun' in lineage;
}

/** Whether `kind` is a valid step kind (it becomes part of a file name). */
export function isValidKind(kind: string): boolean {
  return KIND.test(kind);
}

/** Entries are pretty-printed so that `git log -p agent-journal` reads as a diff of plain JSON. */
export function serializeEntry(entry: JournalEntry | RunRecord): string {
  return `${JSON.stringify(entry, null, 2)}\n`;
}

/** Parses and checks an entry read from `path`; throws CorruptEntryError naming the file and step. */
export function parseEntry(text: string, path: string, expected: { run: string; step: number; kind: string; phase: string }): JournalEntry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CorruptEntryError(path, `it is not valid JSON (${(error as Error).message})`, expected.step);
  }
  const fail = (reason: string): never => {
    throw new CorruptEntryError(path, reason, expected.step);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('it is not a JSON object');
  const entry = value as Record<string, unknown>;
  if (entry.format !== ENTRY_FORMAT) fail(`its format is ${JSON.stringify(entry.format)}, expected "${ENTRY_FORMAT}"`);
  if (entry.run !== expected.run) fail(`it names run ${JSON.stringify(entry.run)} but sits under run ${expected.run}`);
  if (entry.step !== expected.step) fail(`it says step ${JSON.stringify(entry.step)} but its file name says ${expected.step}`);
  if (entry.kind !== expected.kind) fail(`it says kind ${JSON.stringify(entry.kind)} but its file name says ${expected.kind}`);
  if (entry.phase !== expected.phase) fail(`it says phase ${JSON.stringify(entry.phase)} but its file name says ${expected.phase}`);
  if (typeof entry.key !== 'string' || !entry.key.startsWith(`${expected.kind}:`) || entry.key.length > MAX_NAME_CHARS_KEY)
    fail('its key is missing or malformed');
  if (typeof entry.description !== 'string') fail('its description is missing');
  checkString(entry, 'description', fail, { max: MAX_TEXT_CHARS });
  if (!('input' in entry)) fail('its input is missing');
  if (entry.phase === 'result' && !('result' in entry)) fail('it is a result entry without a result');
  if (typeof entry.startedAt !== 'string') fail('its start time is missing');
  checkString(entry, 'startedAt', fail);
  checkString(entry, 'finishedAt', fail, { optional: true });
  checkString(entry, 'summary', fail, { optional: true, max: MAX_TEXT_CHARS });
  checkString(entry, 'resolution', fail, { optional: true });
  if (typeof entry.attempt !== 'number') fail('its attempt number is missing');
  checkCount(entry, 'attempt', fail);
  if (entry.durationMs !== undefined && typeof entry.durationMs !== 'number') fail('its duration is not a number');
  optionalAmount(entry, 'durationMs', fail);
  if (entry.checkpoint !== undefined && !/^[0-9a-f]{40}$/.test(String(entry.checkpoint))) fail('its checkpoint is not a tree id');
  optionalObjectId(entry, 'checkpoint', fail);
  if (entry.usage !== undefined) checkUsage(entry.usage, fail);
  if (entry.checkpointSkipped !== undefined) checkSkipped(entry.checkpointSkipped, fail);
  if (entry.batch !== undefined) checkBatch(entry.batch, expected.step, fail);
  return entry as unknown as JournalEntry;
}

// A key is a kind and a digest; a long one is not one savepoint wrote.
const MAX_NAME_CHARS_KEY = 512;

// Token counts are added up and priced: whole numbers only.
function checkUsage(usage: unknown, fail: Fail): void {
  if (!isObject(usage)) fail('its usage is not an object');
  const u = usage as Record<string, unknown>;
  for (const key of ['inputTokens', 'outputTokens']) checkCount(u, key, fail);
  for (const key of ['cacheCreationInputTokens', 'cacheReadInputTokens']) checkCount(u, key, fail, { optional: true });
}

// A batch is the span of positions the step lies in: it decides where the journal may hold a hole.
function checkBatch(batch: unknown, step: number, fail: Fail): void {
  const [first, last] = Array.isArray(batch) && batch.length === 2 ? (batch as unknown[]) : [];
  const position = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
  if (!position(first) || !position(last) || first > step || step > last)
    fail(`its batch is not the first and last positions of a group that holds step ${step}`);
}

// The files a checkpoint left out are printed by `show`: names sized, sizes numbers.
function checkSkipped(skipped: unknown, fail: Fail): void {
  if (!Array.isArray(skipped)) fail('its checkpointSkipped is not a list');
  for (const item of skipped as unknown[]) {
    if (!isObject(item)) fail('its checkpointSkipped holds something that is not an object');
    const s = item as Record<string, unknown>;
    checkString(s, 'path', fail);
    optionalAmount(s, 'size', fail);
    if (typeof s.size !== 'number') fail('its checkpointSkipped holds a file without a size');
    checkString(s, 'reason', fail, { max: MAX_TEXT_CHARS });
  }
}
