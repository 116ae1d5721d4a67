// The heap of a process that drives a run, kept small for hour-long runs. V8 sizes its heap for
// throughput: under an agent loop that allocates about a megabyte a turn (mostly the SDK's request
// body, and the journal's objects), the new space grows to two 16 MB semi-spaces and the old space
// to three or four times its live set (20 MB, flat), which is 90–110 MB of heap and a 2,000-turn run
// peaking near 200 MB RSS. Two V8 flags read while the process runs (not only at start-up, unlike
// --max-semi-space-size, which v8.setFlagsFromString cannot change any more) bring that to about
// 45 MB of heap, at a few hundred more young-generation collections an hour (bench/long-run.ts).
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The young generation stops growing at this size (two 4 MB semi-spaces; V8's default is 32 MB). */
export const NEW_SPACE_LIMIT = 8 * 1024 * 1024;

/** After a full collection the old generation may grow by this percentage before the next one (V8: up to 300). */
export const HEAP_GROWING_PERCENT = 50;

/** V8's own values of the flags preferSmallHeap sets (V8 11, Node 20 to 22). */
const V8_DEFAULTS = ['--heap-growing-percent=0', '--semi-space-growth-factor=2'];

let applied = false;
let observer: PerformanceObserver | undefined;

/**
 * Keeps this process's heap small: the old generation grows by HEAP_GROWING_PERCENT between full
 * collections, and the new space stops growing once it reaches NEW_SPACE_LIMIT (V8 grows it by
 * doubling when many objects survive; it is told to stop doubling once there). For the commands
 * that drive a run; the reading commands keep V8's defaults (they are short and want throughput).
 */
export function preferSmallHeap(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (newSpaceSize() >= NEW_SPACE_LIMIT) return setFlagsFromString('--semi-space-growth-factor=1');
  observer = new PerformanceObserver(() => {
    if (newSpaceSize() < NEW_SPACE_LIMIT) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    observer?.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}

/**
 * Sets the flags preferSmallHeap changed back to V8's own values, as the process ends: V8 keeps
 * compiled code only for a process started under the same flags, and bin/savepoint.js keeps the
 * bundle's compiled code at exit, so code kept under these flags would be refused by every next
 * start. Nothing allocates much after it: the process is ending.
 */
export function restoreV8Defaults(): void {
  observer?.disconnect();
  for (const flag of V8_DEFAULTS) setFlagsFromString(flag);
}

function newSpaceSize(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
