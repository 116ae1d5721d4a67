// What a checkpoint is made of, shared by every file of worktree/: a file's entry, a file left
// out, the checkpoint itself, and the options it is taken with. It imports nothing of worktree/,
// so the files that build a checkpoint depend on it and not on each other in a circle.
// Tested in test/worktree/snapshot.test.ts.
import type { NameRecorder } from '../redact/names.js';

/** A file left out of a checkpoint, and why (never silently). */
export interface SkippedFile {
  path: string;
  size: number;
  reason: string;
}

/** One checkpoint of a working tree. */
export interface Snapshot {
  /** The git tree of the working tree. */
  tree: string;
  /** Every file in it, submodules' files included: path -> mode and blob id (built on first use). */
  readonly files: Map<string, FileEntry>;
  skipped: SkippedFile[];
}

/** A file of a checkpoint: git's mode (100644, 100755, 120000; 40000 for a submodule's tree) and id. */
export interface FileEntry {
  mode: string;
  oid: string;
}
/** How a snapshotter treats big files, secrets and (submodules) the index's blobs. */
export interface SnapshotOptions {
  /** Files larger than this are left out, with a note (default 10 MB). */
  maxFileBytes?: number;
  /** Rewrites the text of files before they are stored (secret redaction). */
  redactText?: (text: string) => string;
  /** The name each file and directory is recorded under in the trees (a secret in it redacted: redact/names.ts). */
  recordName?: NameRecorder;
  /**
   * The index's blobs are not in `objects` (a submodule's: they are in its own repository), so
   * every file is hashed from the working tree (once; then the stat cache answers).
   */
  hashEveryFile?: boolean;
  /** From this many untracked files on, they are listed directory by directory (untracked-listing.ts). */
  untrackedListingFrom?: number;
}
/** How one checkpoint stores its objects. */
export interface CheckpointOptions {
  /** Leave a few new objects to the object store's next append, which carries them (ObjectStore.hold). */
  hold?: boolean;
}
/** Files larger than this are left out of a checkpoint, with a note. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
