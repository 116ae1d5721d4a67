// The small heap of a process that drives a run (src/cli/heap.ts): the same allocation pattern,
// many young objects surviving, grows V8's new space past the limit by default and not with
// preferSmallHeap. Each side is a fresh node process, since the flags last for the process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { NEW_SPACE_LIMIT } from '../../src/cli/heap.js';
import { ROOT } from '../helpers/cli.js';
import { tsChild } from '../helpers/library.js';

const run = promisify(execFile);

// Keeps a ring of 30,000 small arrays, replacing one at a time, yielding now and then (the limit is
// applied from a gc observer, between two turns of the event loop, as in a run); prints the
// largest new space seen, in bytes. 200,000 replacements: by default the new space passes the limit
// after about 34,000 and reaches V8's own ceiling (32 MB) well before the end, so a longer workload
// puts no more pressure on the limit (it ran 600,000, 2.5 s of CPU a side).
const WORKLOAD = `
import { getHeapSpaceStatistics } from 'node:v8';
if (process.env.SMALL === '1') (await import(process.env.HEAP_MODULE)).preferSmallHeap();
const ring = new Array(30000);
let largest = 0;
for (let i = 0; i < 200000; i++) {
  ring[i % ring.length] = Array.from({ length: 24 }, (_, k) => k + i);
  if (i % 2000 === 0) {
    await new Promise((done) => setImmediate(done));
    largest = Math.max(largest, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
  }
}
console.log(largest);
`;

// src/cli/heap.ts as the child imports it: compiled when the tests run compiled (no tsx loader to
// start in either child, about 1 s of CPU each), else through tsx.
const heapModule = tsChild(fileURLToPath(new URL('../../src/cli/heap.ts', import.meta.url)));

async function largestNewSpace(small: boolean): Promise<number> {
  const { stdout } = await run(process.execPath, [...heapModule.execArgv, '--input-type=module', '-e', WORKLOAD], {
    cwd: ROOT,
    env: { ...process.env, SMALL: small ? '1' : '0', HEAP_MODULE: pathToFileURL(heapModule.file).href },
  });
  return Number(stdout.trim());
}

test('preferSmallHeap stops the new space at its limit, where V8 alone grows it past', async () => {
  const [alone, small] = await Promise.all([largestNewSpace(false), largestNewSpace(true)]);
  assert.ok(alone > NEW_SPACE_LIMIT, `the workload should grow the new space past ${NEW_SPACE_LIMIT} bytes by default (it reached ${alone})`);
  assert.ok(small <= NEW_SPACE_LIMIT, `with preferSmallHeap the new space reached ${small} bytes`);
});
