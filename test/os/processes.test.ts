// The one place savepoint starts child processes: a child runs and hands back its output, a timeout
// and an abort kill its whole group, what a command left running in its group goes when it exits,
// a program that is not installed is said as an error, and no timer of a child's keeps this
// process alive: a process whose children are done (or never started) exits on its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { outputSync, runProcess, runSync, startProcess } from '../../src/os/processes.js';
import { tsChild } from '../helpers/library.js';

// Whether a process with this pid still exists (a zombie counts as gone: it runs nothing).
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

// Polls until `pid` is gone (the kernel tears a killed process down a moment after the signal; on a
// loaded machine that moment can be seconds): up to 60 s, a pass returns as soon as it is gone.
async function gone(pid: number): Promise<boolean> {
  for (const until = Date.now() + 60_000; alive(pid) && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 5));
  return !alive(pid);
}

// The timers and child processes holding this process open.
const held = () => {
  const kinds = process.getActiveResourcesInfo();
  return { timers: kinds.filter((kind) => kind === 'Timeout').length, children: kinds.filter((kind) => kind === 'ProcessWrap').length };
};

describe('starting a child', () => {
  test('it runs with its stdin given and hands back its exit code and output', async () => {
    // --norc: a bash whose stdin is a socket (Node's pipes are) and that finds no SHLVL reads
    // ~/.bashrc, as if started by a remote shell: the test's runner may have none to pass on.
    const result = await runProcess('bash', ['--norc', '-c', 'cat; echo oops >&2; exit 3'], { input: 'hello\n' });
    assert.equal(result.code, 3);
    assert.equal(result.stdout.toString(), 'hello\n');
    assert.equal(result.stderr.toString(), 'oops\n');
    assert.equal(result.timedOut, false);
    assert.equal(result.error, undefined);
  });

  test('a program that is not installed is an error (ENOENT), not a hang', async () => {
    const result = await runProcess('savepoint-no-such-program', [], { timeoutMs: 3_600_000 });
    assert.equal((result.error as NodeJS.ErrnoException | undefined)?.code, 'ENOENT');
    assert.equal(result.code, null);
  });

  test('the synchronous forms run git and throw as execFileSync does on a failure', () => {
    assert.match(runSync('git', ['--version'], { encoding: 'utf8' }).stdout, /^git version/);
    assert.match(outputSync('git', ['--version'], { encoding: 'utf8' }), /^git version/);
    assert.throws(
      () => outputSync('git', ['no-such-subcommand'], { stdio: 'pipe' }),
      (error: { status?: number }) => error.status === 1,
    );
  });

  test('past maxBuffer it is killed and says so', async () => {
    const result = await runProcess('bash', ['-c', 'yes'], { maxBuffer: 64 * 1024, group: true });
    assert.equal(result.overflow, true);
    assert.equal(result.signal, 'SIGKILL');
  });
});

describe('timeouts, aborts and groups', () => {
  test('a timeout kills the whole group: the command and what it started', async () => {
    const handle = startProcess('bash', ['-c', 'sleep 300 & echo $!; wait'], { group: true, timeoutMs: 200 });
    let grandchild = '';
    handle.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (grandchild += chunk));
    const end = await handle.closed;
    assert.equal(end.timedOut, true);
    assert.equal(end.signal, 'SIGKILL');
    assert.ok(await gone(Number(grandchild.trim())), 'the sleep it started was killed with it');
  });

  test('a timeout set later (limit) applies from then, and tells its caller first', async () => {
    const handle = startProcess('sleep', ['300'], { group: true });
    let told = false;
    handle.limit(50, () => (told = true));
    const end = await handle.exited;
    assert.equal(told, true);
    assert.equal(end.timedOut, true);
  });

  test('an abort kills the group, and an abort before the start kills it at once', async () => {
    const controller = new AbortController();
    const handle = startProcess('sleep', ['300'], { group: true, signal: controller.signal });
    controller.abort();
    const end = await handle.exited;
    assert.equal(end.aborted, true);
    assert.equal(end.signal, 'SIGKILL');
    const early = await runProcess('sleep', ['300'], { group: true, signal: AbortSignal.abort() });
    assert.equal(early.aborted, true);
  });

  test('kill reaches the whole group, and killGroupOnExit reaps what a command left running when it exits', async () => {
    const killed = startProcess('bash', ['-c', 'sleep 300 & echo $!; wait'], { group: true });
    let first = '';
    killed.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (first += chunk));
    while (!first.includes('\n')) await new Promise((resolve) => killed.child.stdout!.once('data', resolve));
    killed.kill();
    await killed.closed;
    assert.ok(await gone(Number(first.trim())));
    // bash exits at once, its sleep (its output elsewhere, so the pipe closes) stays in its group.
    const left = await runProcess('bash', ['-c', 'sleep 300 >/dev/null 2>&1 & echo $!'], { group: true, killGroupOnExit: true });
    assert.equal(left.code, 0);
    assert.ok(await gone(Number(left.stdout.toString().trim())), 'the sleep left behind was killed when bash exited');
  });
});

describe('no timer keeps this process alive', () => {
  test("a timeout holds no reference: neither while an unref'd child runs, nor once a spawn failed or a child exited", async () => {
    // An earlier test's child may still be closing its handle: wait for that first (polled), so that
    // what this test leaves is measured against nothing of theirs.
    for (let i = 0; i < 1000 && held().children > 0; i++) await nextTurn();
    const before = held();
    const idle = startProcess('sleep', ['300'], { group: true, timeoutMs: 3_600_000, keepAlive: false });
    assert.deepEqual(held(), before, "an unref'd child with a timeout holds nothing");
    idle.keepAlive(true); // its end is waited for now
    idle.kill();
    await idle.closed;
    await runProcess('savepoint-no-such-program', [], { timeoutMs: 3_600_000 });
    await runProcess('true', [], { timeoutMs: 3_600_000 });
    // A child's handle closes a moment after its end: wait for that (polled), then nothing may be left.
    for (let i = 0; i < 1000 && held().children > before.children; i++) await nextTurn();
    assert.deepEqual(held(), before, `left behind: ${process.getActiveResourcesInfo().join(', ')}`);
  });

  test('a process whose children ended or never started exits on its own, its hour-long timeouts notwithstanding', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-processes-'));
    try {
      const script = join(dir, 'child.mjs');
      // The compiled module when the tests run compiled (plain node starts it), else the source through tsx.
      const { execArgv, file: module } = tsChild(fileURLToPath(new URL('../../src/os/processes.ts', import.meta.url)));
      // As a run refused for want of bubblewrap: the probe's spawn fails, the run says why and ends.
      writeFileSync(
        script,
        `import { runProcess } from ${JSON.stringify(module)};\n` +
          `const missing = await runProcess('bwrap', ['--', 'true'], { timeoutMs: 3_600_000, env: { PATH: ${JSON.stringify(dir)} } });\n` +
          `const ran = await runProcess('true', [], { timeoutMs: 3_600_000 });\n` +
          `console.log(JSON.stringify({ missing: missing.error?.code, ran: ran.code }));\n`,
      );
      // Waited on its exit itself: a timer it held would hold this test until the runner's own timeout failed it.
      const child = spawn(process.execPath, [...execArgv, script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 0);
      assert.deepEqual(JSON.parse(out), { missing: 'ENOENT', ran: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
