// A ref lock is taken to be left by a dead process once it is older than `staleLockMs`, and broken.
// If the holder was only slow (stalled for longer than that), breaking its lock must still lose
// nothing: the stalled writer finds the branch moved (or its lock gone) and rebuilds on the new tip.
// A real second process holds the lock, stalled inside the protocol; this process breaks it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { JournalStore } from '../../src/journal/store.js';
import { assertFsckClean, journalSubjects } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { tsChild } from '../helpers/library.js';

const scratch = useScratch();
// The store's module for a child: compiled when the tests run compiled, else through tsx.
const library = tsChild(fileURLToPath(new URL('../../src/journal/store.ts', import.meta.url)));

// A child that appends one commit ("slow writer") and stalls for `stallMs` at fault point `at`,
// holding the ref lock, the way a process descheduled for a long time would.
function slowWriter(repo: string, at: string, stallMs: number) {
  const script = `
    const { JournalStore } = await import(${JSON.stringify(library.file)});
    let stalled = false;
    const store = await JournalStore.open(${JSON.stringify(repo)}, {
      staleLockMs: 60_000,
      faultPoint: (point) => {
        if (point !== ${JSON.stringify(at)} || stalled) return;
        stalled = true;
        process.stdout.write('stalled\\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${stallMs});
      },
    });
    await store.append([{ path: 'slow.txt', content: 'slow' }], 'slow writer');
    process.stdout.write('appended\\n');
  `;
  const child = spawn(process.execPath, [...library.execArgv, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { output: () => out, exited };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 60_000) throw new Error(`timed out waiting for ${what}`); // a safety net, wide for a loaded machine
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a live ref lock broken by mistake loses nothing', { concurrency: true }, () => {
  for (const at of ['locked', 'before-rename']) {
    test(`a writer stalled at "${at}" while another breaks its lock: both commits end up on the branch`, async () => {
      const repo = await scratch.repo();
      const first = await JournalStore.open(repo.root);
      await first.append([{ path: 'base.txt', content: 'base' }], 'base');
      const slow = slowWriter(repo.root, at, 1500);
      await until(() => slow.output().includes('stalled'), 'the slow writer to hold the lock');
      assert.ok(existsSync(join(repo.root, '.git', 'refs', 'heads', 'agent-journal.lock')), 'the slow writer holds the ref lock');

      const fast = await JournalStore.open(repo.root, { staleLockMs: 200 });
      await fast.append([{ path: 'fast.txt', content: 'fast' }], 'fast writer'); // breaks the "stale" lock

      assert.equal(await slow.exited, 0, slow.output());
      assert.match(slow.output(), /appended/);
      const subjects = await journalSubjects(repo.root);
      assert.deepEqual([...subjects].sort(), ['base', 'fast writer', 'slow writer']);
      const after = await JournalStore.open(repo.root);
      assert.equal((await after.fileAt('slow.txt'))?.toString(), 'slow');
      assert.equal((await after.fileAt('fast.txt'))?.toString(), 'fast');
      assert.ok(!existsSync(join(repo.root, '.git', 'refs', 'heads', 'agent-journal.lock')), 'no lock is left behind');
      await assertFsckClean(repo.root);
    });
  }
});
