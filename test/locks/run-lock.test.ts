// Run-lock liveness across pid namespaces (a host and its devcontainer share a host name and a .git,
// but not their pids): real processes started with `unshare --pid --fork --mount-proc`. Two holders
// in different namespaces never both hold a run; a dead holder's lock from another namespace is
// taken over once its lease ran out (SAVEPOINT_RUN_LOCK_LEASE_MS, short here); a holder whose lease
// lapsed while it was stopped finds its lock gone and writes nothing. In one namespace, a running
// holder is never taken over, a stopped one (SIGSTOP) once its lease ran out; woken, it starts no
// effect (effects.log) and writes nothing.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readlinkSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openJournal, RunLockedError } from '../../src/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { ROOT } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';
import { libraryEntry } from '../helpers/library.js';

const scratch = useScratch();
// Long enough that a live holder's heartbeat (every LEASE/6) never misses it on a loaded machine.
const LEASE_MS = 2000;
const FIXTURE = join(ROOT, 'test/locks/fixtures/lock-holder.mjs');
// The built library when it is current (a holder starts without transpiling src/), else src/ through tsx.
const library = libraryEntry();

// Namespaces need root (CI runs as root) and util-linux's unshare.
const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const skip = canUnshare ? false : 'needs root and `unshare --pid --fork --mount-proc` (util-linux) to make pid namespaces';

interface Holder {
  child: ChildProcess;
  next(): Promise<string>;
  send(line: string): void;
  kill(): void;
  exited: Promise<void>;
}

// The fixture, in a new pid namespace (`own`) or in this one.
function startHolder(dir: string, own: boolean, wait = false, name = 'holder'): Holder {
  const node = [process.execPath, ...library.execArgv, FIXTURE];
  const [command, ...args] = own ? ['unshare', '--pid', '--fork', '--mount-proc', ...node] : node;
  const child = spawn(command!, args, {
    cwd: ROOT,
    detached: true, // a process group of its own, so kill reaches the namespace's init too
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '', NODE_TEST_CONTEXT: '', SAVEPOINT_ENTRY: library.entry, HOLDER_DIR: dir, HOLDER_RUN: 'shared', SAVEPOINT_RUN_LOCK_LEASE_MS: String(LEASE_MS), HOLDER_WAIT: wait ? '1' : '', HOLDER_NAME: name },
  });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  scratch.defer(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  return {
    child,
    // Fails (never hangs the suite) when the holder says nothing for 30 s.
    next: () =>
      lines.length
        ? Promise.resolve(lines.shift()!)
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('the lock holder said nothing for 30 s')), 30_000);
            waiting.push((line) => (clearTimeout(timer), resolve(line)));
          }),
    send: (line) => child.stdin!.write(`${line}\n`),
    kill: () => process.kill(-child.pid!, 'SIGKILL'),
    exited,
  };
}

describe('the run lock across pid namespaces', { concurrency: true, skip }, () => {
  it('two processes in different pid namespaces (same host name) cannot both hold a run', async () => {
    const repo = await scratch.repo();
    const first = startHolder(repo.root, true);
    const held = await first.next();
    assert.match(held, /^held pid:\[\d+\]$/);
    assert.notEqual(held.slice(5), readlinkSync('/proc/self/ns/pid'), 'the holder runs in a pid namespace of its own');
    // Its pid (1 in its namespace) means another process here: the old check took the lock over.
    const owner = JSON.parse(readFileSync(join(repo.root, '.git/savepoint/locks/shared.lock'), 'utf8'));
    assert.equal(owner.pid, 1);
    // Checked well past the lease: the heartbeat keeps it.
    await sleep(LEASE_MS * 2);
    for (const own of [false, true]) {
      const second = startHolder(repo.root, own);
      assert.equal(await second.next(), 'locked ERUNLOCKED', own ? 'from a third namespace' : 'from the host namespace');
      await second.exited;
    }
    first.send('step');
    assert.equal(await first.next(), 'stepped');
    first.send('exit');
    await first.exited;
  });

  it("a dead holder's lock from another namespace is refused while its lease runs, then taken over", async () => {
    const repo = await scratch.repo();
    const first = startHolder(repo.root, true);
    assert.match(await first.next(), /^held /);
    // The probe is started (slow under load) before the kill, and told to try only after it.
    const early = startHolder(repo.root, false, true);
    assert.equal(await early.next(), 'ready');
    first.kill();
    await first.exited;
    const killedAt = Date.now();
    early.send('go');
    const answer = await early.next();
    if (answer.startsWith('held')) early.send('exit'); // only possible if the machine stalled for a whole lease
    await early.exited;
    if (Date.now() - killedAt < LEASE_MS / 2) assert.equal(answer, 'locked ERUNLOCKED', 'the lease has not run out yet');
    await sleep(LEASE_MS + 200);
    const taker = startHolder(repo.root, false);
    assert.match(await taker.next(), /^held /, 'taken over once the lease expired');
    taker.send('step');
    assert.equal(await taker.next(), 'stepped');
    taker.send('exit');
    await taker.exited;
  });

  it('a holder stopped past its lease loses the run to another namespace, and then writes nothing', async () => {
    const repo = await scratch.repo();
    const first = startHolder(repo.root, true, false, 'first');
    assert.match(await first.next(), /^held /);
    first.send('step');
    assert.equal(await first.next(), 'stepped');
    process.kill(-first.child.pid!, 'SIGSTOP');
    await sleep(LEASE_MS + 300);
    const taker = startHolder(repo.root, false, false, 'taker');
    assert.match(await taker.next(), /^held /);
    process.kill(-first.child.pid!, 'SIGCONT');
    await afterTakeover(repo.root, first, taker);
  });
});

// Once the stopped holder `first` is woken after `taker` took the run over: its next step is refused,
// the taker replays step 1 and runs step 2, and the journal and the effects show step 1 from the first
// holder, step 2 from the taker: the holder that lost the lock added nothing and started no effect.
async function afterTakeover(dir: string, first: Holder, taker: Holder): Promise<void> {
  first.send('step');
  assert.equal(await first.next(), 'lost ERUNLOCKLOST');
  taker.send('step'); // replays step 1
  assert.equal(await taker.next(), 'stepped');
  taker.send('step'); // step 2, live
  assert.equal(await taker.next(), 'stepped');
  taker.send('exit');
  await taker.exited;
  first.send('exit');
  await first.exited;
  const entries = await readRunEntries(await JournalStore.open(dir), 'shared');
  assert.deepEqual(entries.map((e) => `${e.step} attempt ${e.attempt}`), ['1 attempt 1', '2 attempt 2']);
  assert.deepEqual(effects(dir), ['first 1', 'taker 2'], 'the holder that lost the lock started no effect');
}

// The effects the holders' steps ran, in order (`<name> <n>` lines of effects.log).
function effects(dir: string): string[] {
  return readFileSync(join(dir, 'effects.log'), 'utf8').trim().split('\n');
}

// Until the lock of run `shared` in `dir` was last renewed more than `ms` ago.
async function untilUnrenewed(dir: string, ms: number): Promise<void> {
  const path = join(dir, '.git/savepoint/locks/shared.lock');
  while (Date.now() - statSync(path).mtimeMs <= ms) await sleep(20);
}

describe('the run lock in one pid namespace', { concurrency: true }, () => {
  it('a running holder is never taken over, a stopped one once its lease ran out; woken, it starts no effect and writes nothing', async () => {
    const repo = await scratch.repo();
    const first = startHolder(repo.root, false, false, 'first');
    assert.match(await first.next(), /^held /);
    first.send('step');
    assert.equal(await first.next(), 'stepped');
    // Running (its pid checks out here), it keeps the run whatever its lock's age says.
    const path = join(repo.root, '.git/savepoint/locks/shared.lock');
    const old = new Date(Date.now() - LEASE_MS * 10);
    utimesSync(path, old, old);
    const refused = startHolder(repo.root, false, false, 'refused');
    assert.equal(await refused.next(), 'locked ERUNLOCKED', 'a running holder keeps its run');
    await refused.exited;
    // Stopped (state T in /proc), it renews nothing: once its lease ran out the run is taken over.
    process.kill(first.child.pid!, 'SIGSTOP');
    await untilUnrenewed(repo.root, LEASE_MS);
    const taker = startHolder(repo.root, false, false, 'taker');
    assert.match(await taker.next(), /^held /, 'a stopped holder past its lease is taken over');
    process.kill(first.child.pid!, 'SIGCONT');
    await afterTakeover(repo.root, first, taker);
  });
});

describe('a lock written under another host name', () => {
  it('holds while its lease is fresh and is taken over once it expired (a killed container)', async () => {
    const repo = await scratch.repo();
    const locks = join(repo.root, '.git/savepoint/locks');
    mkdirSync(locks, { recursive: true });
    const path = join(locks, 'boxed.lock');
    const owner = { pid: 4242, host: 'devcontainer-1f2e', since: '2026-01-01T00:00:00.000Z', bootId: 'another-boot', pidNamespace: 'pid:[1]', leaseMs: 30_000, token: 'boxed' };
    writeFileSync(path, `${JSON.stringify(owner)}\n`);
    await assert.rejects(openJournal({ dir: repo.root, run: 'boxed' }), (error: unknown) => {
      assert.ok(error instanceof RunLockedError);
      assert.equal(error.data.owner.host, 'devcontainer-1f2e');
      assert.match(error.message, /lease/);
      return true;
    });
    const expired = new Date(Date.now() - 31_000);
    utimesSync(path, expired, expired);
    const journal = await openJournal({ dir: repo.root, run: 'boxed' });
    assert.equal(await journal.step('work', {}, () => 'ok'), 'ok');
    journal.close();
  });
});

describe('a lock whose content a power cut lost', () => {
  it('is taken over at once: an empty or torn lock file names no living owner', async () => {
    const repo = await scratch.repo();
    const locks = join(repo.root, '.git/savepoint/locks');
    mkdirSync(locks, { recursive: true });
    // The lock's content is written without fsync (only live processes read it): after a power
    // cut the file may come back empty or torn, and its owner is dead anyway.
    for (const [run, content] of [['empty', ''], ['torn', '{"pid":12']] as const) {
      writeFileSync(join(locks, `${run}.lock`), content);
      const journal = await openJournal({ dir: repo.root, run });
      assert.equal(await journal.step('work', {}, () => 'ok'), 'ok');
      journal.close();
    }
  });
});
