// What a JournalStore is given and tells: the files an append puts on the branch, the options and
// hooks it is opened with (test fault points, --push's hooks), and the mark on an error its
// afterAppend hook threw once the append had landed. Types and that mark only: no fs, no git.
import type { RefFaultPoint } from '../git/refs.js';

/** A file to put on the branch: text or bytes, or an existing tree (a working-tree checkpoint). */
export type JournalFile = { path: string; content: string | Buffer } | { path: string; tree: string };

/** Where a test may stop an append (the crash matrix kills the process there). */
export type FaultPoint = 'before-objects' | 'after-objects' | RefFaultPoint;

/** Options of a JournalStore: hooks after an append, the stale-lock age, test fault points. */
export interface StoreOptions {
  /** Called at each named point of the write path; tests crash or throw there. */
  faultPoint?: (name: FaultPoint) => void;
  /** A ref lock older than this is taken as left by a dead process. */
  staleLockMs?: number;
  /** Read another journal ref instead (e.g. `refs/remotes/origin/agent-journal`). */
  ref?: string;
  /**
   * Runs after every append has moved the branch (`--push`); a throw stops the caller, but what
   * was appended stays appended (the error is marked: appendedCommitOf). `fence` says the append is
   * the intent of a one-shot effect (`what`), which must be seen elsewhere before it runs.
   */
  afterAppend?: (commit: string, append: AppendInfo) => Promise<void>;
  /** Asked before the intent of a one-shot effect is appended: waits until earlier appends reached where afterAppend sends them. */
  beforeFence?: (what: string) => Promise<void>;
  /** Told when an append found the branch deleted or moved back under it and put it back (store.ts). */
  onRestored?: (event: { restored: string; found: string | undefined }) => void;
}

/** What afterAppend is told about an append: whether it fences a one-shot effect, and which. */
export interface AppendInfo {
  fence: boolean;
  what?: string;
}

const APPENDED = Symbol('savepoint.appendedCommit');

/**
 * The commit an append had already put on the branch when `error` was thrown by its afterAppend
 * hook (a failed push), or undefined when the append itself failed and nothing was written.
 */
export function appendedCommitOf(error: unknown): string | undefined {
  return error !== null && typeof error === 'object' ? ((error as Record<symbol, unknown>)[APPENDED] as string | undefined) : undefined;
}

/** Marks `error`, thrown by the afterAppend hook once `commit` was on the branch, for appendedCommitOf. */
export function markAppended(error: unknown, commit: string): void {
  if (error !== null && typeof error === 'object')
    Object.defineProperty(error, APPENDED, { value: commit, enumerable: false, configurable: true }); // one error may end several appends (a push that failed for good)
}
