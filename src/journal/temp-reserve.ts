// Temp files created ahead of the append that will fill them. Creating a file is a metadata change
// the file system must journal, and right after an fsync (the last append's) it is slow: measured
// on ext4 under load, the three creates of an append took 0.4-1.1 ms of its critical path. So once
// an append has landed, the next one's temp files (its pack's, its index's, its ref's prepared
// content) are created on the thread pool while the run goes on (a model call, a command), and
// closed again; the next append opens them (no metadata change), writes, fsyncs and renames them.
// They are not held open in between: a file open for writing would stop the disk from being
// remounted read-only, or unmounted, under a run that is only waiting.
//
// A reserved file is an empty temp file under the name its writer would have used, carrying this
// process's pid, so a kill -9 leaves nothing leftovers.ts does not already remove. One held too
// long is not used (another process removes temp files older than STALE_TEMP_MS whoever made
// them), nor one that is gone or no longer empty: the append then creates its own, as without.
import { closeSync, fchmodSync, fstatSync, open, close, openSync, constants } from 'node:fs';
import { promisify } from 'node:util';
import { unlinkQuietly } from './durable-file.js';

const openAsync = promisify(open);
const closeAsync = promisify(close);

/** A reserved file older than this is thrown away instead of used: far below STALE_TEMP_MS. */
const FRESH_MS = 60_000;

/** A created, empty temp file, open for writing. */
export interface ReservedTemp {
  fd: number;
  path: string;
}

interface Made {
  path: string;
  created: number;
}

/** One temp file kept created ahead, under names from `name` (called once per file), with mode `mode` once taken. */
export class TempReserve {
  // The file on its way or made, and whether it was released meanwhile (then removed once made).
  private slot: { made: Promise<Made | undefined>; file?: Made; released: boolean } | undefined;

  constructor(
    private readonly name: () => string,
    private readonly mode: number,
  ) {}

  /** Starts creating the next file in the background, unless one is already there or on its way. */
  refill(): void {
    if (this.slot) return;
    const path = this.name();
    const created = Date.now();
    const slot: NonNullable<TempReserve['slot']> = { made: Promise.resolve(undefined), released: false };
    // A failure (a full or read-only disk) leaves no reserve: the append then creates its own
    // file and meets the same error where it has a message.
    slot.made = openAsync(path, 'wx', 0o600)
      .then((fd) => closeAsync(fd))
      .then(
        () => {
          const file = { path, created };
          if (slot.released) return void unlinkQuietly(path);
          slot.file = file;
          return file;
        },
        () => undefined,
      );
    this.slot = slot;
  }

  /** The file created ahead, opened for writing, when there is a fresh one (waiting for it if still being made), else undefined. */
  async take(): Promise<ReservedTemp | undefined> {
    const slot = this.slot;
    this.slot = undefined;
    const file = slot ? await slot.made : undefined;
    if (!file) return undefined;
    if (Date.now() - file.created >= FRESH_MS) {
      unlinkQuietly(file.path);
      return undefined;
    }
    let fd: number;
    try {
      fd = openSync(file.path, constants.O_WRONLY | constants.O_NOFOLLOW);
    } catch {
      return undefined; // removed meanwhile
    }
    try {
      if (fstatSync(fd).size !== 0) throw new Error('not the empty file made ahead');
      fchmodSync(fd, this.mode);
      return { fd, path: file.path };
    } catch {
      closeSync(fd);
      return undefined;
    }
  }

  /** Removes the file held in reserve, if any, at once (the journal is done appending). */
  release(): void {
    const slot = this.slot;
    this.slot = undefined;
    if (!slot) return;
    slot.released = true; // one still being made is removed once it is
    if (slot.file) unlinkQuietly(slot.file.path);
  }
}
