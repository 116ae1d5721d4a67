// Checking thousands of files' stats on two threads: a checkpoint must lstat every untracked file
// (an edit in place moves nothing but the file's own stat), and at 20,000 files that is most of its
// time, nearly all of it in the kernel. Each list of paths comes with the stats its files are
// expected to have (the ones they had when last hashed); the threads lstat the files, compare, and
// hand back only the indices whose stat differs, with their new stats: no stat object per file
// crosses threads, and the caller looks only at what changed. The list is cut into chunks that the
// worker threads (one per core beyond this one, up to three) and this thread claim from a shared
// counter: the workers start as soon as a check begins (before the checkpoint's `git status`,
// which blocks this thread), and this thread joins when it finishes. Checkpoints are synchronous,
// so this thread waits on shared memory. The workers are started on first use and never keep the
// process alive; if one stops answering, this thread checks the whole list again and the pool is
// not used again.
import { lstatSync } from 'node:fs';
import { fsPath, hasRawBytes } from '../os/path-bytes.js';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** The fields of an lstat a checkpoint compares; `mode` carries the file type. */
export interface StatFields {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
  mode: number;
}

/** Numbers per path in a StatList's arrays: mtimeMs, ctimeMs, size, ino, mode (mtimeMs NaN: none). */
export const STAT_FIELDS = 5;
const FIELDS = STAT_FIELDS;
const CHUNK = 128; // paths per claim
const MAX_CHUNKS = 0x7fff; // a claim is one int32: job in the high 16 bits, next chunk in the low 16
const WORKER_TIMEOUT_MS = 10_000;
const MAX_WORKERS = 3;
// A small heap for the worker: it holds a list of paths and makes short-lived stat objects (with
// Node's default young generation it grew the process by ~35 MB).
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 };

// Shared control words: the claim (job << 16 | next chunk), chunks done, changed paths found.
const CLAIM = 0;
const DONE = 1;
const FOUND = 2;

// Claims chunks of the current job until none is left: lstats each path and, where the stat differs
// from `known` (NaN: nothing known, always reported), records the index in `changed` and the stat
// in `fresh`; returns how many chunks it claimed. One source, run on both threads (compiled with new Function: a bundler may rename
// what a function's own text refers to, but not inside a string).
const CHECK_SOURCE = `
for (let claimed = 0; ; claimed++) {
  const word = Atomics.load(control, ${CLAIM});
  if (word >>> 16 !== job) return claimed;
  const chunk = word & 0xffff;
  if (chunk >= chunks) return claimed;
  if (Atomics.compareExchange(control, ${CLAIM}, word, word + 1) !== word) { claimed--; continue; }
  const end = Math.min(paths.length, (chunk + 1) * ${CHUNK});
  for (let i = chunk * ${CHUNK}; i < end; i++) {
    let stat;
    try { stat = lstat(paths[i], { throwIfNoEntry: false }); } catch { stat = undefined; }
    const at = i * ${FIELDS};
    if (stat !== undefined && stat.mtimeMs === known[at] && stat.ctimeMs === known[at + 1] && stat.size === known[at + 2] && stat.ino === known[at + 3] && stat.mode === known[at + 4]) continue;
    if (stat === undefined) fresh[at] = NaN;
    else { fresh[at] = stat.mtimeMs; fresh[at + 1] = stat.ctimeMs; fresh[at + 2] = stat.size; fresh[at + 3] = stat.ino; fresh[at + 4] = stat.mode; }
    changed[Atomics.add(control, ${FOUND}, 1)] = i;
  }
  Atomics.add(control, ${DONE}, 1);
  Atomics.notify(control, ${DONE});
}`;
const CHECK_PARAMS = ['lstat', 'job', 'chunks', 'paths', 'known', 'fresh', 'changed', 'control'] as const;
type Check = (
  lstat: typeof lstatSync,
  job: number,
  chunks: number,
  paths: ReadonlyArray<string | Buffer>,
  known: Float64Array,
  fresh: Float64Array,
  changed: Int32Array,
  control: Int32Array,
) => number;
const check = new Function(...CHECK_PARAMS, CHECK_SOURCE) as Check;

// The worker: keeps the latest list (paths and arrays); for each job, claims chunks like this thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
const control = new Int32Array(workerData.control);
const check = new Function(${CHECK_PARAMS.map((name) => JSON.stringify(name)).join(', ')}, ${JSON.stringify(CHECK_SOURCE)});
let list;
parentPort.on('message', (message) => {
  if (message.list) list = { paths: message.list.paths, known: new Float64Array(message.list.known), fresh: new Float64Array(message.list.fresh), changed: new Int32Array(message.list.changed) };
  check(lstatSync, message.job, message.chunks, list.paths, list.known, list.fresh, list.changed, control);
});`;

/**
 * A list of paths under a directory and, per path, the stat it is expected to have (`known`,
 * STAT_FIELDS numbers each; mtimeMs NaN: nothing expected, always reported). After a check, `fresh`
 * holds the stats of the paths it reported (mtimeMs NaN: gone). The arrays are shared with the
 * worker. While the process's working directory is that directory, the paths are lstat()ed as they
 * are, relative to it: the kernel walks fewer directories than for an absolute path (measured: 10%
 * less CPU for 20,000 files two levels down).
 */
export class StatList {
  /** What is lstat()ed: the paths as given, or joined to the directory. */
  readonly paths: ReadonlyArray<string | Buffer>;
  readonly known: Float64Array;
  /** Replaced (no longer shared) when the worker stopped answering in the middle of a check. */
  fresh: Float64Array;
  /** Written by checks: the indices they report. */
  readonly changed: Int32Array;
  private readonly root: string;
  private readonly relative: boolean;

  /** `paths` are relative to `root` (normalised, as git names them); `root` is absolute. */
  constructor(paths: readonly string[], root: string, known?: Float64Array) {
    this.root = root;
    this.relative = process.cwd() === root;
    // A name that is not UTF-8 is lstat()ed as its bytes (os/path-bytes.ts), which a worker takes as a Uint8Array.
    const listed = this.relative ? paths : paths.map((path) => `${root}/${path}`);
    this.paths = listed.some(hasRawBytes) ? listed.map(fsPath) : listed;
    const slots = Math.max(1, paths.length);
    this.known = new Float64Array(new SharedArrayBuffer(slots * FIELDS * 8)).fill(NaN);
    if (known) this.known.set(known);
    this.fresh = new Float64Array(new SharedArrayBuffer(slots * FIELDS * 8));
    this.changed = new Int32Array(new SharedArrayBuffer(slots * 4));
  }

  /** This list, or (the working directory moved since it was made) the same one with absolute paths. */
  resolvable(of: readonly string[]): StatList {
    return !this.relative || process.cwd() === this.root ? this : new StatList(of, this.root, this.known);
  }

  /** Sets what path `i` is expected to look like (undefined: nothing, so it is always reported). */
  expect(i: number, stat: StatFields | undefined): void {
    const at = i * FIELDS;
    if (!stat) {
      this.known[at] = NaN;
      return;
    }
    this.known[at] = stat.mtimeMs;
    this.known[at + 1] = stat.ctimeMs;
    this.known[at + 2] = stat.size;
    this.known[at + 3] = stat.ino;
    this.known[at + 4] = stat.mode;
  }

  /** The stat a check found for reported path `i`, undefined when there was none. */
  freshAt(i: number): StatFields | undefined {
    return statAt(this.fresh, i);
  }
}

/** Checks StatLists on this thread and worker threads (one per further core, at most MAX_WORKERS). */
export class StatPool {
  private workers: Worker[] = [];
  private broken = false;
  private readonly control = new Int32Array(new SharedArrayBuffer(12));
  private job = 0;
  private sent: StatList | undefined; // the list the workers hold
  private running: { list: StatList; job: number; chunks: number } | undefined;
  /** How many chunks the workers checked in the last check (tests see that they take part). */
  workerChunks = 0;
  private readonly workerCount: number;

  /** `workers`: how many worker threads (default: one per core beyond this thread's, at most MAX_WORKERS). */
  constructor(workers = Math.max(1, Math.min(MAX_WORKERS, availableParallelism() - 1))) {
    this.workerCount = workers;
  }

  /**
   * Starts checking `list` (the workers start on it at once); finish() joins in and gives the
   * answer. Nothing may change the list's arrays in between.
   */
  begin(list: StatList): void {
    if (this.running) this.finish();
    const chunks = Math.ceil(list.paths.length / CHUNK);
    this.job = (this.job % 0x7ffe) + 1;
    const job = this.job;
    Atomics.store(this.control, DONE, 0);
    Atomics.store(this.control, FOUND, 0);
    Atomics.store(this.control, CLAIM, (job << 16) | 0);
    this.running = { list, job, chunks };
    const workers = chunks > 1 && chunks <= MAX_CHUNKS ? this.start() : [];
    if (workers.length === 0) return;
    const shared =
      this.sent === list
        ? {}
        : { list: { paths: list.paths, known: list.known.buffer, fresh: list.fresh.buffer, changed: list.changed.buffer } };
    for (const worker of workers) worker.postMessage({ job, chunks, ...shared });
    this.sent = list;
  }

  /** Checks what is left of the list begun, waits for the workers: the indices reported, in order. */
  finish(): number[] {
    const running = this.running;
    if (!running) return [];
    this.running = undefined;
    const { list, job, chunks } = running;
    if (chunks > MAX_CHUNKS) return this.alone(list);
    const mine = check(lstatSync, job, chunks, list.paths, list.known, list.fresh, list.changed, this.control);
    if (!this.await(chunks)) {
      // No answer: a worker may still write into the list's shared arrays, so it is checked
      // again into arrays of its own (the list's `fresh` is one of those from now on).
      this.broken = true;
      for (const worker of this.workers) void worker.terminate();
      this.workers = [];
      return this.alone(list);
    }
    this.workerChunks = chunks - mine;
    return Array.from(list.changed.subarray(0, this.control[FOUND]!)).sort((a, b) => a - b);
  }

  // The whole list on this thread alone, into arrays of its own (a worker may hold the list's),
  // in rounds of at most MAX_CHUNKS chunks (a claim counts no further).
  private alone(list: StatList): number[] {
    const control = new Int32Array(3);
    const fresh = new Float64Array(list.fresh.length);
    const changed: number[] = [];
    const round = MAX_CHUNKS * CHUNK;
    for (let from = 0; from < list.paths.length; from += round) {
      const paths = list.paths.slice(from, from + round);
      const found = new Int32Array(paths.length);
      control[CLAIM] = 1 << 16;
      control[FOUND] = 0;
      check(
        lstatSync,
        1,
        Math.ceil(paths.length / CHUNK),
        paths,
        list.known.subarray(from * FIELDS),
        fresh.subarray(from * FIELDS),
        found,
        control,
      );
      for (let k = 0; k < control[FOUND]!; k++) changed.push(found[k]! + from);
    }
    list.fresh = fresh;
    this.workerChunks = 0;
    return changed.sort((a, b) => a - b);
  }

  private start(): Worker[] {
    if (this.workers.length > 0 || this.broken) return this.workers;
    try {
      for (let i = 0; i < this.workerCount; i++) {
        const worker = new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { control: this.control.buffer },
          resourceLimits: WORKER_LIMITS,
        });
        worker.unref();
        worker.on('error', () => (this.broken = true));
        worker.on('exit', () => (this.broken = true));
        this.workers.push(worker);
      }
    } catch {
      this.broken = true;
    }
    return this.workers;
  }

  // Until every chunk is done (a worker may be in the middle of one this thread could not claim).
  private await(chunks: number): boolean {
    const deadline = Date.now() + WORKER_TIMEOUT_MS;
    for (let done = Atomics.load(this.control, DONE); done < chunks; done = Atomics.load(this.control, DONE)) {
      if (this.broken || Date.now() > deadline) return false;
      Atomics.wait(this.control, DONE, done, 100);
    }
    return true;
  }
}

/** The stat of path `i` in an array of STAT_FIELDS numbers per path, undefined when there was none. */
export function statAt(results: Float64Array, i: number): StatFields | undefined {
  const at = i * FIELDS;
  return Number.isNaN(results[at])
    ? undefined
    : { mtimeMs: results[at]!, ctimeMs: results[at + 1]!, size: results[at + 2]!, ino: results[at + 3]!, mode: results[at + 4]! };
}
