// A zombie is dead: a process that ended and whose parent has not reaped it yet (state Z in
// /proc/<pid>/stat) still answers a signal 0, to its pid and to its process group, but it runs
// nothing. In a container whose PID 1 reaps slowly an orphaned command's processes stay zombies for a
// while; every check that decides "alive" judges them as the kernel does. The zombies here are real:
// a parent that execs `sleep` after starting a child never waits for that child.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { clearLiveCommand, recordLiveCommand, stopOrphanedCommands } from '../../src/locks/live-commands.js';
import { runLockHolder } from '../../src/locks/run-lock.js';
import { bootId, groupRuns, pidNamespace, procStat, stillRuns } from '../../src/os/proc.js';
import { waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// A parent that never reaps: `sh` starts `child` in a session (and process group) of its own, then
// becomes `sleep`, which never waits. `child` prints its pid ($$ of the inner sh) first.
async function withUnreapedChild(child: string): Promise<{ pid: number; parent: ChildProcess }> {
  const parent = spawn('sh', ['-c', `setsid sh -c '${child}' & exec sleep 1000`], { stdio: ['ignore', 'pipe', 'inherit'] });
  scratch.defer(() => parent.kill('SIGKILL'));
  let printed = '';
  parent.stdout!.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
  await waitUntil(() => /^\d+\n/.test(printed), 'the child to print its pid');
  return { pid: Number(printed.trim().split('\n')[0]), parent };
}

// A process that exited and that its parent never reaps, alone in its process group.
async function zombie(): Promise<number> {
  const { pid } = await withUnreapedChild('echo $$; exit 0');
  await waitUntil(() => procStat(pid)?.[0] === 'Z', 'the child to become a zombie');
  assert.equal(procStat(pid)?.[2], String(pid), 'the zombie leads a process group of its own');
  assert.doesNotThrow(() => process.kill(-pid, 0), 'a signal 0 still reaches the group: that alone cannot tell');
  return pid;
}

describe('a zombie is dead', { concurrency: true }, () => {
  test('stillRuns: a zombie pid does not run, even with its start time recorded', async () => {
    const pid = await zombie();
    assert.equal(stillRuns({ pid, startTime: procStat(pid)?.[19] }), false);
    assert.equal(stillRuns({ pid }), false);
    assert.equal(stillRuns({ pid: process.pid, startTime: procStat(process.pid)?.[19] }), true, 'this process runs');
  });

  test('groupRuns: a group whose members are all zombies is dead; one living member keeps it alive', async () => {
    const pid = await zombie();
    assert.equal(groupRuns(pid), false);
    // A zombie leader whose group still has a living member (its backgrounded sleep).
    const { pid: leader } = await withUnreapedChild('sleep 1000 & echo $$; exit 0');
    scratch.defer(() => signalQuietly(-leader));
    await waitUntil(() => procStat(leader)?.[0] === 'Z', 'the leader to become a zombie');
    assert.equal(groupRuns(leader), true, 'the sleep in its group still runs');
    process.kill(-leader, 'SIGKILL');
    await waitUntil(() => !groupRuns(leader), 'the group to end once its sleep is killed');
  });

  test('stopOrphanedCommands: a recorded command whose group holds only zombies is not reported as still running', async () => {
    const commonDir = scratch.dir('savepoint-zombie-');
    const pid = await zombie();
    recordLiveCommand(commonDir, 'run-a', pid, 2, 'run_bash "publish"');
    assert.deepEqual(await stopOrphanedCommands(commonDir, 'run-a', 200), [], 'nothing ran: nothing was stopped');
    assert.equal(existsSync(join(commonDir, 'savepoint/commands/run-a.json')), false, 'the record is cleared');
    // A living group recorded the same way is still found and stopped.
    const { pid: living } = await withUnreapedChild('echo $$; exec sleep 1000');
    recordLiveCommand(commonDir, 'run-b', living, 3, 'run_bash "sleep"');
    const [report] = await stopOrphanedCommands(commonDir, 'run-b', 2000);
    assert.equal(report?.outcome, 'stopped');
    clearLiveCommand(commonDir, 'run-b', living);
  });

  test('runLockHolder: a lock whose owner is a zombie has no live holder', async () => {
    const commonDir = scratch.dir('savepoint-zombie-lock-');
    const pid = await zombie();
    mkdirSync(join(commonDir, 'savepoint/locks'), { recursive: true });
    const lock = join(commonDir, 'savepoint/locks/run-z.lock');
    const owner = { pid, startTime: procStat(pid)?.[19], bootId: bootId(), pidNamespace: pidNamespace(), host: hostname(), since: new Date().toISOString(), leaseMs: 30_000, token: 'zombie' };
    writeFileSync(lock, `${JSON.stringify(owner)}\n`);
    assert.equal(runLockHolder(commonDir, 'run-z'), undefined, 'a fresh lease does not keep a zombie holding the run');
    writeFileSync(lock, `${JSON.stringify({ ...owner, pid: process.pid, startTime: procStat(process.pid)?.[19] })}\n`);
    assert.equal(runLockHolder(commonDir, 'run-z')?.pid, process.pid, 'a running owner holds it');
    assert.match(readFileSync(lock, 'utf8'), /"token":"zombie"/);
  });
});

function signalQuietly(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // already gone
  }
}
