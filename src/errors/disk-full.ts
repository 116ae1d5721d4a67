// Resources that ran out under a run: the disk (or the user's quota), a disk that began refusing writes, and
// the file descriptors (`ulimit -n`).
// Tested in test/journal/disk-full.test.ts.
import { SavepointError } from './savepoint-error.js';

// What a failed write of the journal leaves: files are written whole or not at all, and the
// branch only ever points at what is fully on disk.
const NOTHING_LOST =
  'Nothing that was finished is lost: every step recorded before this one is whole on the ' +
  'agent-journal branch, and the step being recorded was not half-written.';

/** The errno codes that mean "no room left": the disk is full, or the user's quota is used up. */
export const DISK_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/**
 * A write to the journal failed for lack of space (ENOSPC) or quota (EDQUOT). Every step recorded
 * before it is intact: files are written whole or not at all, and the branch only ever points at
 * what is fully on disk. The step being recorded was not, so the same command resumes there.
 */
export class DiskFullError extends SavepointError<{ path: string; errno: string }> {
  constructor(path: string, errno: string, cause?: unknown) {
    const what = errno === 'EDQUOT' ? 'your disk quota is used up' : 'the disk is full';
    super(
      'EDISKFULL',
      `savepoint could not write ${path}: ${what} (${errno}). ${NOTHING_LOST} Free some space on ` +
        `that disk, then run the same command again; it picks up where it stopped.`,
      { path, errno },
      { cause },
    );
  }
}

/** The errno codes that mean the journal's disk refuses writes: mounted read-only, or not permitted. */
export const WRITE_REFUSED_CODES: ReadonlySet<string> = new Set(['EROFS', 'EACCES', 'EPERM']);

/**
 * A write to the journal was refused in the middle of a run: the file system went read-only (a disk
 * error makes the kernel remount it so) or the permissions changed. As with a full disk, every step
 * recorded before it is intact and the one being recorded was not half-written.
 */
export class JournalWriteRefusedError extends SavepointError<{ path: string; errno: string }> {
  constructor(path: string, errno: string, cause?: unknown) {
    const what = errno === 'EROFS' ? 'its file system is now read-only' : 'permission to write it was refused';
    super(
      'EJOURNALREADONLY',
      `savepoint could not write ${path}: ${what} (${errno}). ${NOTHING_LOST} Make the repository ` +
        `writable again (a file system the kernel remounted read-only after a disk error needs ` +
        `checking first; then remount it read-write, or fix the permissions), then run the same ` +
        `command again; it picks up where it stopped.`,
      { path, errno },
      { cause },
    );
  }
}

/**
 * `error` as a DiskFullError when its errno says the disk or quota is full (about `path`), as a
 * JournalWriteRefusedError when the disk refuses writes, else unchanged.
 */
export function asWriteFailure(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!code) return error;
  if (DISK_FULL_CODES.has(code)) return new DiskFullError(path, code, error);
  return WRITE_REFUSED_CODES.has(code) ? new JournalWriteRefusedError(path, code, error) : error;
}

/** The errno codes that mean this process (EMFILE) or the whole system (ENFILE) has no file descriptor left. */
export const NO_FILES_LEFT_CODES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE']);

/** The errno of `error` or of an error in its cause chain when it is one of NO_FILES_LEFT_CODES (git's spawn says it only in its message). */
export function noFilesLeftCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code && NO_FILES_LEFT_CODES.has(code)) return code;
    const named = /\b(EMFILE|ENFILE)\b/.exec(e.message)?.[1];
    if (named) return named;
  }
  return undefined;
}

/**
 * The process ran out of file descriptors (`ulimit -n` set low) or the system did: Node.js, git and
 * the commands it runs each need some. Said as what to do, not as an internal error.
 */
export class TooManyOpenFilesError extends SavepointError<{ errno: string; limit: number | null }> {
  constructor(errno: string, limit: number | undefined, cause?: unknown) {
    const why =
      errno === 'ENFILE'
        ? 'the system has no file descriptor left for savepoint (ENFILE): close some programs'
        : `savepoint may have only ${limit ?? 'a few'} files open at once (ulimit -n${limit === undefined ? '' : ` is ${limit}`}), fewer than Node.js, git and the commands it runs need together (EMFILE): raise the limit, for example with "ulimit -n 1024" in this shell`;
    super(
      'ETOOMANYFILES',
      `Too many open files: ${why}, then run the same command again. Every step recorded before this is kept in the journal, and the same command goes on from there.`,
      { errno, limit: limit ?? null },
      { cause },
    );
  }
}
