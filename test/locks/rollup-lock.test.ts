// One pack roll-up at a time across processes: while another live process holds the roll-up lock,
// this one's roll-ups are skipped (its packs stay, nothing is lost); a lock whose holder was killed
// with SIGKILL, or one from another machine older than any roll-up takes, is taken over. Judged by
// git: count-objects and fsck --strict.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { ROLLUP_LOCK_NAME, STALE_ROLLUP_LOCK_MS } from '../../src/locks/rollup-lock.js';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { rollupStepContent, rollupStepPath } from '../helpers/rollup-kills.js';
import { useScratch } from '../helpers/scratch.js';
import { tsChild } from '../helpers/library.js';

const scratch = useScratch();
// The modules for a child: compiled when the tests run compiled, else through tsx (the same way for both).
const lockModule = tsChild(fileURLToPath(new URL('../../src/locks/rollup-lock.ts', import.meta.url)));
const storeModule = tsChild(fileURLToPath(new URL('../../src/journal/store.ts', import.meta.url)));

async function packCount(root: string): Promise<number> {
  return Number(/^packs: (\d+)$/m.exec(await gitOut(root, ['count-objects', '-v']))?.[1]);
}

// A child process that takes the roll-up lock of `objectsDir` and holds it until killed.
async function holdLockInChild(objectsDir: string): Promise<{ kill: () => Promise<void> }> {
  const code = `const { tryRollupLock } = await import(${JSON.stringify(lockModule.file)}); console.log(tryRollupLock(${JSON.stringify(objectsDir)}) ? 'held' : 'busy'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, [...lockModule.execArgv, '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => child.stdout.setEncoding('utf8').once('data', (chunk: string) => resolve(chunk.trim())));
  assert.equal(line, 'held');
  return {
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

async function appendSteps(store: JournalStore, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) await store.append([{ path: rollupStepPath(i), content: rollupStepContent(i) }], `r #${i} run_bash`);
  await store.objects.rollup.settle();
}

describe('the roll-up lock', () => {
  it('skips roll-ups while another live process holds it, and takes it over once that process is killed with SIGKILL', async () => {
    const repo = await scratch.repo();
    const objectsDir = join(repo.root, '.git', 'objects');
    const store = await JournalStore.open(repo.root);
    const holder = await holdLockInChild(objectsDir);
    try {
      // 40 appends: well past the roll-up trigger, yet every background roll-up was skipped.
      await appendSteps(store, 0, 40);
      assert.equal(await store.objects.rollup.rollNow(true), undefined, 'no roll-up while the lock is held');
      assert.ok((await packCount(repo.root)) >= 40, 'every append kept its own pack');
      await assertFsckClean(repo.root);
    } finally {
      await holder.kill(); // its lock file stays behind, its holder gone
    }
    assert.ok(existsSync(join(objectsDir, ROLLUP_LOCK_NAME)));
    const rolled = await store.objects.rollup.rollNow(true);
    assert.ok(rolled && rolled.removed.length >= 40, `the dead holder's lock was taken over: ${JSON.stringify(rolled)}`);
    assert.equal(await packCount(repo.root), 1);
    assert.equal(existsSync(join(objectsDir, ROLLUP_LOCK_NAME)), false, 'released after the roll-up');
    const fresh = await JournalStore.open(repo.root);
    for (const i of [0, 17, 39]) assert.equal((await fresh.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i));
    await assertFsckClean(repo.root);
  });

  it('counts a lock from another machine as held until it is older than any roll-up takes', async () => {
    const repo = await scratch.repo();
    const objectsDir = join(repo.root, '.git', 'objects');
    const lock = join(objectsDir, ROLLUP_LOCK_NAME);
    // Its pid means nothing here: another boot.
    writeFileSync(lock, `${JSON.stringify({ pid: process.pid, startTime: '1', bootId: 'another-machine', pidNamespace: 'pid:[1]' })}\n`);
    const store = await JournalStore.open(repo.root);
    await appendSteps(store, 0, 20);
    assert.equal(await store.objects.rollup.rollNow(true), undefined);
    assert.ok((await packCount(repo.root)) >= 20);

    const old = (Date.now() - STALE_ROLLUP_LOCK_MS - 60_000) / 1000;
    utimesSync(lock, old, old);
    const rolled = await store.objects.rollup.rollNow(true);
    assert.ok(rolled && rolled.removed.length >= 20);
    assert.equal(await packCount(repo.root), 1);
    assert.equal(existsSync(lock), false);
    await assertFsckClean(repo.root);
  });

  it('lets two processes roll up the same journal at once, and loses no object', async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    await appendSteps(store, 0, 60);
    const packsBefore = await packCount(repo.root);
    // Two children (one store each, as two runs are), told to roll up everything at the same moment.
    const code = `const { JournalStore } = await import(${JSON.stringify(storeModule.file)}); const store = await JournalStore.open(process.argv[1]); console.log('opened'); await new Promise((go) => process.stdin.once('data', go)); const rolled = await store.objects.rollup.rollNow(true); console.log(JSON.stringify({ removed: rolled?.removed.length ?? 0 }));`;
    const children = [0, 1].map(() => spawn(process.execPath, [...storeModule.execArgv, '--input-type=module', '-e', code, repo.root], { stdio: ['pipe', 'pipe', 'inherit'] }));
    const opened: Array<Promise<void>> = [];
    const outputs = children.map((child) => new Promise<string>((resolve) => {
      let out = '';
      // Ready once it says so, or once it ended without saying so (its output then fails below).
      opened.push(new Promise((ready) => {
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk).startsWith('opened\n') && ready());
        child.once('exit', () => ready());
      }));
      child.once('close', () => resolve(out.slice('opened\n'.length).trim()));
    }));
    await Promise.all(opened); // both have opened the journal
    for (const child of children) child.stdin!.end('go\n');
    const removed = (await Promise.all(outputs)).map((out) => (JSON.parse(out) as { removed: number }).removed);
    assert.ok(removed.some((n) => n > 0), `one of them rolled up: ${JSON.stringify(removed)} of ${packsBefore} packs`);
    assert.equal(await packCount(repo.root), 1);
    assert.equal(existsSync(join(repo.root, '.git', 'objects', ROLLUP_LOCK_NAME)), false);
    const fresh = await JournalStore.open(repo.root);
    for (let i = 0; i < 60; i++) assert.equal((await fresh.fileAt(rollupStepPath(i)))?.toString(), rollupStepContent(i));
    assert.equal(/^garbage: (\d+)$/m.exec(await gitOut(repo.root, ['count-objects', '-v']))?.[1], '0');
    await assertFsckClean(repo.root);
  });
});
