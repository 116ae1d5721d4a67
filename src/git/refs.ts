// Reading and moving a branch the way git itself does, with a compare-and-swap that two processes
// (or a process and git) can race on without losing an update: git's own `<ref>.lock` protocol (a
// writer that truncates the ref file in place with no lock, as isomorphic-git's writeRef does, loses
// appends under concurrency).
import { closeSync, fstatSync, linkSync, readFileSync, renameSync, statSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { asWriteFailure, JournalBusyError } from '../errors/index.js';
import { abandonTemp, DirectorySync, fsyncAsync, openTempAsync, syncPath, unlinkQuietly, writeFully } from '../os/durable-file.js';
import type { Reflog } from './reflog.js';

const OID = /^[0-9a-f]{40}$/;

let tempCounter = 0;

/** The commit a ref points at: its loose file if present, else its line in packed-refs. */
export function readRef(gitdir: string, ref: string): string | undefined {
  let loose: string | undefined;
  try {
    loose = readFileSync(join(gitdir, ref), 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (loose !== undefined) {
    if (OID.test(loose)) return loose;
    throw new Error(`${ref} holds "${loose.slice(0, 60)}", not a commit id`);
  }
  return readPackedRefs(gitdir).get(ref);
}

/** The commit HEAD of the worktree at `gitdir` points at (detached or through a branch), if any. */
export function readHeadCommit(gitdir: string, commonDir: string): string | undefined {
  try {
    const head = readFileSync(join(gitdir, 'HEAD'), 'utf8').trim();
    if (OID.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    return ref ? readRef(commonDir, ref) : undefined;
  } catch {
    return undefined;
  }
}

/** Every ref in packed-refs (written by `git pack-refs` and `git gc`). */
export function readPackedRefs(gitdir: string): Map<string, string> {
  const refs = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(join(gitdir, 'packed-refs'), 'utf8');
  } catch {
    return refs;
  }
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]{40}) (\S+)$/.exec(line);
    if (match) refs.set(match[2]!, match[1]!);
  }
  return refs;
}

/** How compareAndSwapRef moves a ref: a prepared lock content, a test fault point, the stale-lock age, the reflog message. */
export interface SwapOptions {
  /** A lock older than this is taken to be left by a dead process (an append holds it ~1 ms). */
  staleMs?: number;
  /** How long to wait for a live lock before giving up. */
  timeoutMs?: number;
  /** Called between the steps of the protocol; tests use it to crash or fail at each point. */
  faultPoint?: (name: RefFaultPoint) => void;
  /** Whether `oid` is reachable from `tip`: decides the outcome when the ref moved under us. */
  isAncestor?: (oid: string, tip: string) => Promise<boolean>;
  /** The lock's content, already written by prepareRefUpdate (so its fsync could overlap others). */
  prepared?: PreparedRef;
  /**
   * The reflog this move is noted in, and its message (git's `logs/<ref>`, see reflog.ts); none when
   * undefined. `onTip`: `next`'s first parent is `expected` (an append), which the reflog logs only when due.
   */
  reflog?: { log: Reflog; message: string; onTip?: boolean };
}

/**
 * Writes, fsynced, the content a lock moving `ref` to `next` will have, under a name git ignores,
 * and returns its path for compareAndSwapRef's `prepared`. Doing this alongside the objects' writes
 * takes one fsync off the critical path; the lock itself is still only taken after they are durable.
 */
export async function prepareRefUpdate(gitdir: string, ref: string, next: string): Promise<PreparedRef> {
  const path = lockContentPath(join(gitdir, ref));
  // Its content must be on disk (it becomes the ref); its own name need not (it is linked, then
  // removed), nor must it appear whole: it is linked only once written and fsynced, so it is
  // written in place under its unique name, with no temp file and rename of its own.
  // The directories made for it, when the ref's is missing (a first `refs/savepoint/pending/<run>`,
  // and refs/savepoint with it): a new directory's name lives in its parent, so each parent that
  // gained one is fsynced before the ref moves in, or a power cut could take the directory, and the
  // ref, after its move was called durable (compareAndSwapRef syncs only the ref's own directory).
  const made = new DirectorySync();
  try {
    // Created on the thread pool: its wait for the file system's journal overlaps the pack's.
    const fd = await openTempAsync(path, 0o644, made);
    try {
      writeFully(fd, Buffer.from(`${next}\n`));
      const { ino, mtimeMs } = fstatSync(fd);
      await fsyncAsync(fd);
      await made.flush(); // nothing to do but when a directory was made
      closeSync(fd);
      return { path, ino, mtimeMs };
    } catch (error) {
      abandonTemp(fd, path);
      throw error;
    }
  } catch (error) {
    throw asWriteFailure(error, path);
  }
}

/** A lock's content written ahead by prepareRefUpdate: its path, inode and modification time. */
export interface PreparedRef {
  path: string;
  ino: number;
  mtimeMs: number;
}

// The prepared lock content lives beside the ref under a name starting with '.', which git skips
// when it lists refs: a kill -9 before it is unlinked must not leave a stray (or, mid-write, a
// broken) branch `agent-journal.lock.tmp-…` that `git branch` shows and `git fsck` fails on.
// The counter keeps two swaps of one process in the same millisecond apart.
function lockContentPath(refPath: string): string {
  return join(dirname(refPath), `.${basename(refPath)}.lock-${process.pid}-${Date.now()}-${tempCounter++}`);
}

/** Where a test may stop a ref update (the crash matrix kills the process there). */
export type RefFaultPoint = 'before-lock' | 'locked' | 'before-rename' | 'before-sync' | 'after-rename';

/**
 * Moves `ref` from `expected` (undefined: the ref does not exist yet) to `next`, using git's lock
 * protocol: the lock file `<ref>.lock` is created with its content already written and fsynced (by
 * hard-linking a temp file, so a lock never exists half-written), the tip is re-read under it, and
 * the lock is renamed over the ref. Returns false when the ref was not at `expected` (the caller
 * rebuilds on the new tip). A lock left by a killed process is broken after `staleMs`; breaking a
 * live one by mistake is safe too, because the outcome is verified by reading the ref back.
 */
export async function compareAndSwapRef(
  gitdir: string,
  ref: string,
  expected: string | undefined,
  next: string,
  options: SwapOptions = {},
): Promise<boolean> {
  const { staleMs = 1000, timeoutMs = 10_000, faultPoint = () => {}, isAncestor } = options;
  const refPath = join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  try {
    faultPoint('before-lock');
  } catch (error) {
    if (options.prepared) unlinkQuietly(options.prepared.path);
    throw error;
  }
  const prepared = options.prepared ?? (await prepareRefUpdate(gitdir, ref, next));
  let ourInode: number;
  try {
    ourInode = await acquire(prepared, lockPath, staleMs, timeoutMs);
  } finally {
    unlinkQuietly(prepared.path);
  }
  let renamed = false;
  // From here until the rename the lock is ours: whatever throws (a failed read, an injected
  // fault) must release it, or every writer, git included, is blocked until it turns stale.
  try {
    faultPoint('locked');
    const current = readRef(gitdir, ref);
    if (current !== expected) return false;
    faultPoint('before-rename');
    if (inodeOf(lockPath) !== ourInode) return false; // our lock was broken: someone else owns it now
    options.reflog?.log.append(ref, current, next, options.reflog.message, options.reflog.onTip);
    try {
      renameSync(lockPath, refPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return false;
    }
    renamed = true;
    faultPoint('before-sync');
    // The rename is the append: make it survive a power cut before anyone is told it happened.
    // On this thread: one fsync alone costs less CPU than a trip through the thread pool
    // (measured over 300 read turns of the CLI).
    syncPath(dirname(refPath));
  } finally {
    if (!renamed) releaseIfOurs(lockPath, ourInode); // once renamed, the lock path is gone or someone else's
  }
  faultPoint('after-rename');
  const now = readRef(gitdir, ref);
  if (now === next) return true;
  // Someone renamed a lock over ours in the same instant; we won only if our commit is in history.
  return now !== undefined && isAncestor !== undefined && (await isAncestor(next, now));
}

async function acquire(prepared: PreparedRef, lockPath: string, staleMs: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      // The lock's age is its file's mtime, shared with the file it is linked from: touch it first
      // unless it was written just now, or a lock taken after a long wait (or a slow write of the
      // objects) would look stale to others the moment it exists.
      if (Date.now() - prepared.mtimeMs > staleMs / 4) {
        const now = new Date();
        utimesSync(prepared.path, now, now);
      }
      linkSync(prepared.path, lockPath);
      return prepared.ino;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = lockAge(lockPath);
    if (age !== undefined && age > staleMs) {
      unlinkQuietly(lockPath); // left by a process that died holding it
      continue;
    }
    const waited = Date.now() - started;
    if (waited > timeoutMs) throw new JournalBusyError(lockPath, waited);
    await sleep(Math.min(1 + attempt, 20));
  }
}

function lockAge(lockPath: string): number | undefined {
  try {
    return Date.now() - statSync(lockPath).mtimeMs;
  } catch {
    return undefined;
  }
}

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

function releaseIfOurs(lockPath: string, inode: number): void {
  if (inodeOf(lockPath) === inode) unlinkQuietly(lockPath);
}

/**
 * The branch the user's HEAD is on (`main`), or null when HEAD is detached or unreadable: recorded
 * with a run, so that a finished run from another branch is not silently replayed for "the same
 * task" here.
 */
export function readHeadBranch(repo: { gitdir: string }): string | null {
  try {
    const head = readFileSync(join(repo.gitdir, 'HEAD'), 'utf8').trim();
    return /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? null;
  } catch {
    return null;
  }
}
