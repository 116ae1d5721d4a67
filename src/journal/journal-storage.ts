// What the valve needs of the journal's storage, and nothing more: read a run's files at the tip
// (its entries, run.json) and objects by id, append files as one commit durably (the branch moved
// by compare-and-swap), and this machine's side of a run (its lock, the commands it started, a
// tree kept from gc, where HEAD is). Two implementations: JournalStore (store.ts), the git branch
// `agent-journal`, and MemoryJournalStore (memory-store.ts), which holds the same objects in a map,
// so that the valve and the agent loop are tested in-process without a disk or a git process.
// No behaviour of its own: types only.
import type { ObjectType, Tree } from '../git/git-object.js';
import type { OrphanReport } from '../locks/live-commands.js';
import type { RunLock } from '../locks/run-lock.js';
import type { JournalFile, StoreOptions } from './store-options.js';

/** Reading objects by id, as the journal's readers do (ObjectStore is the git one). */
export interface ObjectReader {
  /** An object's body; one larger than `maxBytes` is refused unread (ObjectTooLargeError). */
  read(oid: string, expected: ObjectType, maxBytes?: number): Promise<Buffer>;
  /** The entries of tree `oid`. */
  readTree(oid: string): Promise<Tree>;
}

/** Where a run is being driven: what run.json records of it when the run is made and finished. */
export interface RunWhere {
  /** HEAD's commit, or undefined in a repository without one. */
  headCommit(): string | undefined;
  /** The branch HEAD is on, or null when detached. */
  headBranch(): string | null;
  /** The working tree's root. */
  readonly worktree: string;
}

/** This machine's side of a run: not in the journal, never pushed. */
export interface RunLocal extends RunWhere {
  /** Throws when the journal cannot be written here (a read-only repository). */
  assertWritable(): void;
  /** Takes the run's lock, or throws RunLockedError naming the live process holding it. */
  lock(run: string): RunLock;
  /** Stops the commands a dead attempt of `run` left running; says what it found. */
  stopOrphans(run: string): Promise<OrphanReport[]>;
  /** Notes a process group a step of `run` started (`untrackCommand` once it ended). */
  trackCommand(run: string, pgid: number, step: number, description: string, outlivesStep: boolean): void;
  untrackCommand(run: string, pgid: number): void;
  /** Keeps `tree`, written but not yet in the journal, from a gc (until `releaseTree`). */
  keepTree(run: string, tree: string): Promise<void>;
  releaseTree(run: string): Promise<void>;
}

/**
 * The journal's storage as the valve uses it. `append` puts `files` on the branch in one commit,
 * durable before it resolves, and returns the commit; `owns` is asked before every attempt, and
 * a step file already on the branch with other content is never replaced (StepAlreadyRecordedError).
 */
export interface JournalStorage {
  readonly objects: ObjectReader;
  readonly local: RunLocal;
  /** The branch's tip as last read or written. */
  readonly tip: string | undefined;
  /** Reads the tip again; true when it moved. */
  refresh(): Promise<boolean>;
  /** The tree at `path` at the tip ('' for the root), or undefined. */
  treeAt(path: string): Promise<Tree | undefined>;
  /** The file at `path` at the tip, or undefined; one over `maxBytes` is refused unread. */
  fileAt(path: string, maxBytes?: number): Promise<Buffer | undefined>;
  append(files: JournalFile[], message: string, owns?: () => void, fence?: string): Promise<string>;
  /** Waits before a one-shot effect's intent until earlier appends reached where they are sent (--push). */
  settle(what: string): Promise<void>;
  /** Sets a run's hooks: after each append (--push), before a fence, when a moved branch was put back. */
  hook(hooks: Pick<StoreOptions, 'afterAppend' | 'beforeFence' | 'onRestored'>): void;
}
