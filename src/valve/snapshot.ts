// A run's snapshot: the agent loop's state at a recent step, kept in the journal beside the entries
// (runs/<run>/snapshot.json, written in the commit of the step after it), so that opening the run
// reads it and the entries after it, and the loop starts there instead of being driven through
// every recorded step. It saves time and nothing else: a snapshot that is missing, from another
// format or configuration, not about the entry it names, or not what the schema says (a fetched
// journal is input) is ignored, and the run replays whole as it always did. Pure code.
import { createHash } from 'node:crypto';
import type { RunConfig } from '../journal/entry.js';
import { isObject, MAX_NAME_CHARS, OBJECT_ID } from '../journal/fields.js';
import type { Message, UserBlock } from '../model/types.js';
import { canonicalJson } from './key.js';
import type { EntryTotalsState } from './run-totals.js';

/** The format of snapshot.json; a snapshot of any other is ignored (the run replays whole). */
export const SNAPSHOT_FORMAT = 'savepoint/snapshot@1';

/** A snapshot is written when at least this many steps went by since the last one. */
export const SNAPSHOT_EVERY = 200;

/**
 * After a compaction (the conversation at its smallest, so the snapshot too), one is written
 * sooner: when at least this many steps went by since the last. A shorter run replays in a blink.
 */
export const SNAPSHOT_AFTER_COMPACTION = 50;

/** The largest snapshot.json read: one larger is ignored unread (the conversation is bounded by the context window, a few MB at most). */
export const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/** `runs/<run>/snapshot.json` */
export function snapshotPath(run: string): string {
  return `runs/${run}/snapshot.json`;
}

/**
 * The agent loop's state just before the model call of a turn (agent/loop.ts): everything its
 * next request and its later decisions depend on. The valve keeps it as given; the loop made it.
 */
export interface LoopState {
  /** The turn whose model call comes next (the model step's input names it). */
  turn: number;
  /** The model in use (the pinned one, or the last config step's). */
  model: string;
  /** The conversation as the model is sent it (after a compaction: the task, the summary, the turns kept). */
  messages: Message[];
  /** The tokens the conversation held at the last response (or a compaction's estimate). */
  tokens: number;
  compactionsInARow: number;
  /** A compaction was tried since the last response: not tried again before the next one. */
  settled: boolean;
  /** The run's steps, model calls and estimated cost, as the user's limits count them. */
  budget: { steps: number; turns: number; cost: number };
  /** Stop hooks that sent the model on since the person's last message. */
  stopBlocks: number;
  /** The last final answer, a cut-off answer's text so far, and how many continuations in a row. */
  final: string;
  partial: string;
  continuations: number;
  /** The run's last follow-up (its words and step): a resume with the same words knows it is not new. */
  lastFollowUp?: { message: string; step: number };
}

/** What snapshot.json holds: the loop's state after step `step`, and what ties it to the journal. */
export interface RunSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  run: string;
  /** The step the state is after: every step up to it is finished. */
  step: number;
  /** That step's result entry: its kind (so its file name) and its blob id, checked against the branch. */
  entry: { kind: string; oid: string };
  /** The digest of the run's pinned configuration (configDigest): another configuration, another loop. */
  config: string;
  /** How many steps up to `step` hold a finished result (all of them). */
  finished: number;
  /** The run's totals up to `step` (run.json's, and the last checkpoint a resume compares the tree with). */
  totals: EntryTotalsState;
  loop: LoopState;
}

/** The digest of a run's pinned configuration, as a snapshot names it. */
export function configDigest(config: RunConfig | undefined): string {
  return createHash('sha256')
    .update(canonicalJson(config ?? null))
    .digest('hex')
    .slice(0, 32);
}

/**
 * The snapshot in `text`, when it is one of this format for `run` and every field is what it must
 * be; undefined otherwise (the caller replays whole). Whether it matches the branch is the caller's
 * to check (its entry's blob id, the configuration's digest).
 */
export function parseSnapshot(text: string, run: string): RunSnapshot | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isSnapshot(value, run) ? value : undefined;
}

function isSnapshot(value: unknown, run: string): value is RunSnapshot {
  if (!isObject(value) || value.format !== SNAPSHOT_FORMAT || value.run !== run) return false;
  if (!isCount(value.step, 1) || !isCount(value.finished) || value.finished !== value.step) return false;
  const { entry, totals, loop } = value;
  if (
    !isObject(entry) ||
    !isName(entry.kind) ||
    !/^[A-Za-z][A-Za-z0-9_-]*$/.test(entry.kind as string) ||
    typeof entry.oid !== 'string' ||
    !OBJECT_ID.test(entry.oid)
  )
    return false;
  if (typeof value.config !== 'string' || !/^[0-9a-f]{32}$/.test(value.config)) return false;
  return isTotals(totals, value.step) && isLoopState(loop, value.step);
}

function isTotals(value: unknown, step: number): value is EntryTotalsState {
  if (!isObject(value)) return false;
  const { files, lastStep, lastFinished, modelCalls, tokens, lastActivity, latest, checkpoint, trail } = value;
  if (!isCount(files) || lastStep !== step || lastFinished !== true || !isCount(modelCalls)) return false;
  if (!isObject(tokens) || !['input', 'output', 'cacheCreation', 'cacheRead'].every((key) => isCount(tokens[key]))) return false;
  if (lastActivity !== null && !isName(lastActivity)) return false;
  if (latest !== null && (typeof latest !== 'number' || !Number.isFinite(latest))) return false;
  if (checkpoint !== undefined) {
    if (!isObject(checkpoint) || !isTree(checkpoint.tree) || !isCount(checkpoint.step, 1) || (checkpoint.step as number) > step)
      return false;
    if (checkpoint.finishedAt !== undefined && !isName(checkpoint.finishedAt)) return false;
  }
  return (
    Array.isArray(trail) &&
    trail.length <= step &&
    trail.every((mark) => isObject(mark) && isTree(mark.tree) && typeof mark.person === 'boolean')
  );
}

function isLoopState(value: unknown, step: number): value is LoopState {
  if (!isObject(value)) return false;
  const { turn, model, messages, tokens, compactionsInARow, settled, budget, stopBlocks, final, partial, continuations, lastFollowUp } =
    value;
  if (!isCount(turn, 1) || !isName(model) || !isCount(tokens) || !isCount(compactionsInARow) || typeof settled !== 'boolean') return false;
  if (
    !isObject(budget) ||
    budget.steps !== step ||
    !isCount(budget.turns) ||
    typeof budget.cost !== 'number' ||
    !Number.isFinite(budget.cost) ||
    budget.cost < 0
  )
    return false;
  if (!isCount(stopBlocks) || typeof final !== 'string' || typeof partial !== 'string' || !isCount(continuations)) return false;
  if (
    lastFollowUp !== undefined &&
    (!isObject(lastFollowUp) ||
      typeof lastFollowUp.message !== 'string' ||
      !isCount(lastFollowUp.step, 1) ||
      (lastFollowUp.step as number) > step)
  )
    return false;
  return Array.isArray(messages) && messages.length > 0 && messages.every(isMessage);
}

// A message as the loop sends it: a user turn (text, or text and tool results) or an assistant turn
// (blocks). The blocks' own fields are the model's and the tools', checked as JSON objects with a
// type; what the model is sent from them is also what a replay would have rebuilt (the next model
// step's recorded digest says when it is not: a divergence, never a silent change).
function isMessage(value: unknown): value is Message {
  if (!isObject(value)) return false;
  if (value.role === 'user') return typeof value.content === 'string' || (Array.isArray(value.content) && value.content.every(isUserBlock));
  return value.role === 'assistant' && Array.isArray(value.content) && value.content.every(isBlock);
}

function isUserBlock(value: unknown): value is UserBlock {
  return isBlock(value) && (value.type === 'text' || value.type === 'tool_result');
}

function isBlock(value: unknown): value is { type: string } {
  return isObject(value) && isName(value.type);
}

function isCount(value: unknown, min = 0): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_CHARS;
}

function isTree(value: unknown): boolean {
  return typeof value === 'string' && OBJECT_ID.test(value);
}
