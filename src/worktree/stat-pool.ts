// lstat()ing thousands of files on two threads: a checkpoint must stat every untracked file (an edit
// in place moves nothing but the file's own stat), and at 20,000 files that is most of its time,
// nearly all of it in the kernel. A worker thread stats half of them while this thread stats the
// other half; the results come back through shared memory while this thread waits (checkpoints are
// synchronous). The worker is started on first use and never keeps the process alive; if it does
// not answer, this thread stats its half too and the pool is not used again.
import { lstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** The fields of an lstat a checkpoint compares; `mode` carries the file type. */
export interface StatFields {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
  mode: number;
}

/** Numbers per path in statAll's answer: mtimeMs, ctimeMs, size, ino, mode (mtimeMs NaN: none). */
export const STAT_FIELDS = 5;
const FIELDS = STAT_FIELDS;
const WORKER_TIMEOUT_MS = 10_000;
// A small heap for the worker: it holds a list of paths and makes short-lived stat objects (with
// Node's default young generation it grew the process by ~35 MB).
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 };

// The worker: keeps the latest list of paths; for each job, stats its range into the shared results.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
const control = new Int32Array(workerData.control);
let paths = [];
parentPort.on('message', (message) => {
  if (message.paths) paths = message.paths;
  const out = new Float64Array(message.results);
  for (let i = message.from; i < message.to; i++) {
    let stat;
    try { stat = lstatSync(paths[i]); } catch { stat = undefined; }
    const at = i * ${FIELDS};
    if (!stat) { out[at] = NaN; continue; }
    out[at] = stat.mtimeMs; out[at + 1] = stat.ctimeMs; out[at + 2] = stat.size; out[at + 3] = stat.ino; out[at + 4] = stat.mode;
  }
  Atomics.store(control, 0, message.job);
  Atomics.notify(control, 0);
});`;

/** Stats lists of paths on this thread and one worker thread. */
export class StatPool {
  private worker: Worker | undefined;
  private broken = false;
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private job = 0;
  private sent: readonly string[] | undefined; // the list the worker holds
  private results: Float64Array | undefined; // shared with the worker, reused from call to call

  /**
   * The lstat of each of `paths` (absolute), STAT_FIELDS numbers each (read one with statAt),
   * valid until the next call. Pass the same array again while the list is unchanged: the worker
   * is sent the list only when it is a new one.
   */
  statAll(paths: readonly string[]): Float64Array {
    const needed = Math.max(1, paths.length) * FIELDS;
    if (!this.results || this.results.length < needed) this.results = new Float64Array(new SharedArrayBuffer(needed * 8));
    const results = this.results;
    const split = Math.ceil(paths.length / 2);
    const worker = this.start();
    const job = ++this.job;
    if (worker) {
      worker.postMessage({ job, results: results.buffer, from: split, to: paths.length, ...(this.sent === paths ? {} : { paths }) });
      this.sent = paths;
    }
    statRange(paths, results, 0, worker ? split : paths.length);
    if (worker && !this.await(job)) {
      // No answer: this thread does the worker's half, into results the worker no longer writes.
      this.broken = true;
      void this.worker?.terminate();
      this.worker = undefined;
      this.results = undefined;
      const own = new Float64Array(paths.length * FIELDS);
      own.set(results.subarray(0, split * FIELDS));
      statRange(paths, own, split, paths.length);
      return own;
    }
    return results;
  }

  private start(): Worker | undefined {
    if (this.worker || this.broken) return this.worker;
    try {
      this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { control: this.control.buffer }, resourceLimits: WORKER_LIMITS });
      this.worker.unref();
      this.worker.on('error', () => (this.broken = true));
    } catch {
      this.broken = true;
    }
    return this.worker;
  }

  private await(job: number): boolean {
    const deadline = Date.now() + WORKER_TIMEOUT_MS;
    for (let done = Atomics.load(this.control, 0); done !== job; done = Atomics.load(this.control, 0)) {
      if (this.broken || Date.now() > deadline) return false;
      Atomics.wait(this.control, 0, done, 100);
    }
    return true;
  }
}

function statRange(paths: readonly string[], out: Float64Array, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    let stat;
    try {
      stat = lstatSync(paths[i]!);
    } catch {
      stat = undefined;
    }
    const at = i * FIELDS;
    if (!stat) {
      out[at] = NaN;
      continue;
    }
    out[at] = stat.mtimeMs;
    out[at + 1] = stat.ctimeMs;
    out[at + 2] = stat.size;
    out[at + 3] = stat.ino;
    out[at + 4] = stat.mode;
  }
}

/** The lstat of path `i` in an answer of statAll, undefined when there was none. */
export function statAt(results: Float64Array, i: number): StatFields | undefined {
  const at = i * FIELDS;
  return Number.isNaN(results[at]) ? undefined : { mtimeMs: results[at]!, ctimeMs: results[at + 1]!, size: results[at + 2]!, ino: results[at + 3]!, mode: results[at + 4]! };
}
