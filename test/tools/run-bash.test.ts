import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { StoppedBySignalError } from '../../src/errors/index.js';
import { createRunBashTool, journalSize } from '../../src/tools/run-bash.js';
import { SpareShells } from '../../src/tools/spare-shell.js';
import { truncateForModel } from '../../src/tools/truncate.js';
import { waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

// True while the process runs; a zombie (killed, not yet reaped by init) counts as dead.
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

// A process sent SIGKILL ends when the kernel next schedules it, which on a loaded machine can be
// after the kill call returned: waited on for up to 60 s, never taken as alive after one look.
async function hasEnded(pid: number): Promise<boolean> {
  for (const until = Date.now() + 60_000; isAlive(pid) && Date.now() < until; ) await sleep(20);
  return !isAlive(pid);
}

// Reads the pid a command wrote to `file`, waiting for it to appear (up to 60 s: a loaded machine
// may take seconds to start the command).
async function readPid(file: string): Promise<number> {
  for (const until = Date.now() + 60_000; !existsSync(file) && Date.now() < until; ) await sleep(20);
  return Number(readFileSync(file, 'utf8').trim());
}

// Every test below runs twice: each command started cold, and each started ahead (spare-shell.ts),
// the next spare started beside every command, so that all but a suite's first command run in one.
const STARTS = [
  { how: '', spares: () => undefined },
  { how: ', each command started ahead in a spare shell', spares: () => new SpareShells({ longCommandMs: 0 }) },
];

for (const { how, spares: makeSpares } of STARTS) describe(`run_bash${how}`, () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let tool: ReturnType<typeof createRunBashTool>;
  const spares = makeSpares();
  before(async () => {
    repo = await scratch.repo({ 'a.txt': 'a\n' }, { commit: false });
    tool = createRunBashTool(repo.root, undefined, undefined, spares);
  });
  after(() => spares?.close());

  it('runs in the repository root and reports exit 0 with the output', async () => {
    const result = await tool.execute({ command: 'pwd; ls' });
    assert.equal(result.isError, false);
    assert.equal(result.output, `exit 0\n${repo.root}\na.txt`);
    assert.equal(result.summary, 'exit 0: a.txt');
  });

  it('interleaves stdout and stderr in the order they were written', async () => {
    const result = await tool.execute({ command: 'echo one; echo two >&2; echo three' });
    assert.equal(result.output, 'exit 0\none\ntwo\nthree');
  });

  it('keeps multi-byte characters whole across pipe reads, in the result and the live view', async () => {
    // 200,001 bytes: one ASCII byte, then two-byte characters, from one printf: its first write is
    // 4 KB counted from the ASCII byte (ending inside a character), the next 188 KB, more than the
    // pipe holds, so reads end inside characters. (A loop of printf builtins writing whole
    // characters each was never split, and forked a seq per iteration: 1,000 processes.)
    let live = '';
    const result = await tool.execute({ command: "printf 'x%s' \"$(printf 'é%.0s' {1..100000})\"" }, { onOutput: (chunk) => (live += chunk) });
    const expected = `x${'é'.repeat(100_000)}`;
    assert.equal(result.output, `exit 0\n${expected}`);
    assert.equal(live, expected);
  });

  it('stops a command that prints a flood of NUL bytes within the cap as the journal stores it, so its result can always be recorded', async () => {
    // 100 MB of NULs is 600 MB of JSON (each one is \u0000): past what one string holds, the run crashed.
    const result = await tool.execute({ command: 'head -c 100000000 /dev/zero; echo never-reached' });
    assert.equal(result.isError, true);
    assert.equal(result.summary, 'stopped: output over 256 MB');
    assert.match(result.output, /^stopped: the output passed 256 MB \(control bytes such as NUL count six/);
    assert.doesNotMatch(result.output, /never-reached/);
    const recorded = JSON.stringify(result);
    assert.ok(recorded.length <= 257 * 1024 * 1024, `${recorded.length} characters of JSON`);
  });

  it('counts output as the journal holds it: control bytes six characters, quotes and backslashes two, newlines and tabs two, the rest one', () => {
    assert.equal(journalSize(Buffer.from('plain')), 5);
    assert.equal(journalSize(Buffer.from([0, 1, 0x1f])), 18);
    assert.equal(journalSize(Buffer.from('"\\\n\t')), 8);
    for (const bytes of [Buffer.from([0, 0x22, 0x41, 0x0a, 0x1b, 0xff]), Buffer.from('é日\r')]) {
      assert.ok(JSON.stringify(bytes.toString('utf8')).length - 2 <= journalSize(bytes));
    }
  });

  it('says plainly when the program cannot be started', async () => {
    const noBash = createRunBashTool(repo.root, { kind: 'bwrap' });
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const result = await noBash.execute({ command: 'true' });
      assert.equal(result.isError, true);
      assert.match(result.output, /^failed to start bwrap: spawn bwrap ENOENT/);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('reports a non-zero exit with the last line of output in the summary', async () => {
    const result = await tool.execute({ command: 'echo "running 5 tests"; echo "1 failed, 4 passed" >&2; exit 1' });
    assert.equal(result.isError, false);
    assert.equal(result.output, 'exit 1\nrunning 5 tests\n1 failed, 4 passed');
    assert.equal(result.summary, 'exit 1: 1 failed, 4 passed');
    const quiet = await tool.execute({ command: 'exit 3' });
    assert.equal(quiet.output, 'exit 3\n(no output)');
    assert.equal(quiet.summary, 'exit 3');
  });

  it('shortens a long last line in the summary', async () => {
    const result = await tool.execute({ command: `echo ${'x'.repeat(200)}` });
    assert.ok(result.summary.length <= 'exit 0: '.length + 60, result.summary);
    assert.ok(result.summary.endsWith('…'));
  });

  it("passes the user's environment and ignores stdin", async () => {
    process.env.SAVEPOINT_TOOLS_TEST = 'from-the-parent';
    try {
      const result = await tool.execute({ command: 'echo "$SAVEPOINT_TOOLS_TEST"; cat; read line; echo "read exit $?"' });
      assert.equal(result.output, 'exit 0\nfrom-the-parent\nread exit 1');
    } finally {
      delete process.env.SAVEPOINT_TOOLS_TEST;
    }
  });

  it('returns all of a 100,000-line output; truncateForModel then keeps head and tail', async () => {
    const result = await tool.execute({ command: 'seq 1 100000' });
    const lines = result.output.split('\n');
    assert.equal(lines.length, 100_001);
    assert.equal(lines[1], '1');
    assert.equal(lines.at(-1), '100000');
    assert.equal(result.summary, 'exit 0: 100000');
    const forModel = truncateForModel(result.output).split('\n');
    assert.ok(forModel.length <= 2000);
    assert.equal(forModel[0], 'exit 0');
    assert.equal(forModel.at(-1), '100000');
    assert.ok(forModel.some((line) => /^\[\.\.\. [\d,]+ lines \(.+\) cut from the middle; to see them, narrow the command \(grep, head, tail\) or read a range \(offset, limit\) \.\.\.\]$/.test(line)));
  });

  it('on timeout kills the whole process group, grandchildren included', async () => {
    // 2 s: what the test looks at (the output, both pid files) must be there before the timeout
    // fires, and on a loaded machine bash took up to a second to get there.
    const result = await tool.execute({
      command: 'echo started; (sleep 5; echo late > late.txt) & echo $! > late.pid; sleep 30 & echo $! > sleeper.pid; wait',
      timeout_ms: 2000,
    });
    assert.equal(result.isError, true);
    assert.equal(result.summary, 'timed out after 2 s');
    assert.match(result.output, /^timed out after 2 s; the command and every process it started were killed\nstarted$/);
    const sleeper = await readPid(join(repo.root, 'sleeper.pid'));
    assert.equal(await hasEnded(sleeper), true, `sleep 30 (pid ${sleeper}) still runs`);
    // The subshell that would write late.txt at 5 s is gone without having written it: the command
    // was killed before, and nothing of it can write later (no sleep standing in for "later").
    const late = await readPid(join(repo.root, 'late.pid'));
    assert.equal(await hasEnded(late), true, 'the background subshell lived on');
    assert.equal(existsSync(join(repo.root, 'late.txt')), false, 'the background subshell ran to its end');
  });

  it('on abort kills the whole process group', async () => {
    // Aborted once the command has started its sleep (a fixed 300 ms came before that under load).
    const controller = new AbortController();
    const pidFile = join(repo.root, 'aborted.pid');
    const running = tool.execute({ command: 'sleep 30 & echo $! > aborted.pid.tmp; mv aborted.pid.tmp aborted.pid; wait' }, { signal: controller.signal });
    await waitUntil(() => existsSync(pidFile), 'the command to start its sleep');
    controller.abort();
    const result = await running;
    assert.equal(result.isError, true);
    assert.match(result.summary, /^stopped \(aborted\) after [\d.]+ s$/);
    assert.match(result.output, /^stopped by the caller \(aborted\) after [\d.]+ s: the command and every process it started were stopped before it ended\. Its output so far:\n\(no output\)$/);
    assert.equal(await hasEnded(await readPid(pidFile)), true);
  });

  it('stopped by a person\'s signal, says which and after how long, with the output so far', async () => {
    // Stopped once the output so far is there (a fixed 300 ms came before it under load).
    const controller = new AbortController();
    let seen = '';
    const onOutput = (chunk: string) => ((seen += chunk), seen.includes('begun') && controller.abort(new StoppedBySignalError('SIGTERM')));
    const result = await tool.execute({ command: 'echo begun; sleep 30' }, { signal: controller.signal, onOutput });
    assert.equal(result.isError, true);
    assert.match(result.summary, /^stopped by SIGTERM after [\d.]+ s$/);
    assert.match(result.output, /^stopped by the person \(SIGTERM\) after [\d.]+ s: .*\nbegun$/);
  });

  it('does not start a command when the signal is already aborted', async () => {
    const result = await tool.execute({ command: 'touch ran.txt' }, { signal: AbortSignal.abort() });
    assert.equal(result.isError, true);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false);
  });

  it('ends background processes when the command ends instead of waiting for them', async () => {
    const result = await tool.execute({ command: '(sleep 30; touch waited.txt) & echo $! > background.pid; echo done' });
    assert.equal(result.output, 'exit 0\ndone');
    const pid = await readPid(join(repo.root, 'background.pid'));
    assert.equal(await hasEnded(pid), true);
    assert.equal(existsSync(join(repo.root, 'waited.txt')), false, 'the command waited for its background process');
  });

  // A daemon: it leaves the group (setsid), says so in `file` once it has, then sleeps holding the
  // command's output; the command waits for that before going on, so it has escaped by then.
  const daemon = (file: string, name = 'sleep') => `setsid bash -c 'echo from-the-daemon; echo $$ > ${file}; exec -a "${name}" sleep 30' & until [ -s ${file} ]; do sleep 0.01; done`;
  const stopDaemon = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };

  it('returns once bash exits though a process that left the group holds the output open, naming it (control characters shown) and leaving it running', async () => {
    const result = await tool.execute({ command: `${daemon('escaped.pid', '$(printf "sleeper\\033[31m")')}; echo started` });
    const pid = await readPid(join(repo.root, 'escaped.pid'));
    try {
      assert.equal(isAlive(pid), true, 'the daemon was left running');
      assert.equal(result.isError, false);
      assert.equal(result.summary, 'exit 0: started');
      assert.equal(result.note, `still running: pid ${pid}`);
      assert.equal(
        result.output,
        `exit 0\nfrom-the-daemon\nstarted\nnote: still running: pid ${pid} (sleeper^[[31m 30). It left the command's process group (setsid, a daemon) and holds the command's output open, so it was not stopped; run_bash stopped reading once the command had ended: what it prints from now on is not here. Stop it with \`kill ${pid}\` once it is no longer needed.`,
      );
    } finally {
      stopDaemon(pid);
    }
  });

  it('on timeout kills the group, stops reading although an escaped process holds the output, and names that process', async () => {
    // 2 s: the daemon, the output and grouped.pid come before the timeout, also on a loaded machine.
    const result = await tool.execute({ command: `${daemon('timed.pid')}; echo started; sleep 30 & echo $! > grouped.pid; wait`, timeout_ms: 2000 });
    const pid = await readPid(join(repo.root, 'timed.pid'));
    try {
      assert.equal(isAlive(pid), true, 'the daemon was left running');
      assert.equal(result.isError, true);
      assert.equal(result.summary, 'timed out after 2 s');
      assert.equal(result.note, `still running: pid ${pid}`);
      assert.match(result.output, new RegExp(`^timed out after 2 s; the command and its process group were killed\nfrom-the-daemon\nstarted\nnote: still running: pid ${pid} \\(sleep 30\\)\\. `));
      const grouped = await readPid(join(repo.root, 'grouped.pid'));
      assert.equal(await hasEnded(grouped), true, 'the sleep in the group was killed');
    } finally {
      stopDaemon(pid);
    }
  });

  it('stopped by the person while an escaped process holds the output, records what came and names that process', async () => {
    const controller = new AbortController();
    let seen = '';
    const onOutput = (chunk: string) => ((seen += chunk), seen.includes('started') && controller.abort(new StoppedBySignalError('SIGINT')));
    const result = await tool.execute({ command: `${daemon('stopped.pid')}; echo started; sleep 30` }, { signal: controller.signal, onOutput });
    const pid = await readPid(join(repo.root, 'stopped.pid'));
    try {
      assert.equal(isAlive(pid), true, 'the daemon was left running');
      assert.match(result.summary, /^stopped by Ctrl-C after [\d.]+ s$/);
      assert.match(result.output, new RegExp(`^stopped by the person \\(Ctrl-C[^)]*\\) after [\\d.]+ s: the command and its process group were stopped before it ended\\. Its output so far:\nfrom-the-daemon\nstarted\nnote: still running: pid ${pid} \\(sleep 30\\)`));
    } finally {
      stopDaemon(pid);
    }
  });

  it('describes itself on one short line and is never repeat-safe', () => {
    assert.equal(tool.describe({ command: 'npm test' }), 'run_bash "npm test"');
    const long = tool.describe({ command: `for f in *; do\n  echo "$f"\ndone ${'x'.repeat(100)}` });
    assert.ok(!long.includes('\n'));
    assert.ok(long.length <= 'run_bash ""'.length + 50, long);
    assert.equal(tool.isRepeatSafe({ command: 'ls' }), false);
    assert.equal(tool.needsApproval({ command: 'ls' }), true);
    assert.equal(tool.mayChangeFiles({ command: 'ls' }), true);
  });

  it('rejects bad input without running anything', async () => {
    for (const input of [{}, { command: ['ls'] }, { command: 'ls', timeout_ms: -1 }, { command: '  ' }]) {
      const result = await tool.execute(input as never);
      assert.equal(result.isError, true, JSON.stringify(input));
    }
  });
});

// Processes on this machine whose command line is exactly `args` (inside a pid namespace too).
function processesRunning(args: string): number {
  const out = spawnSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' }).stdout;
  return out.split('\n').filter((line) => {
    const match = /^\s*(\S+)\s+(.*)$/.exec(line);
    return match !== null && !match[1]!.startsWith('Z') && match[2] === args;
  }).length;
}

const bwrapMissing = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--', 'true']).status === 0 ? undefined : 'bubblewrap cannot start here (apt-get install bubblewrap)';

for (const { how, spares: makeSpares } of STARTS) describe(`run_bash in bubblewrap${how}`, { skip: bwrapMissing }, () => {
  const scratch = useScratch();
  let repo: TempRepo;
  let tool: ReturnType<typeof createRunBashTool>;
  const spares = makeSpares();
  before(async () => {
    repo = await scratch.repo({ 'a.txt': 'a\n' });
    tool = createRunBashTool(repo.root, { kind: 'bwrap' }, undefined, spares);
  });
  after(() => spares?.close());

  it('on timeout kills everything the command started inside the sandbox', async () => {
    const marker = `sleep 3171.${process.pid}`;
    const result = await tool.execute({ command: `(${marker} &) ; ${marker}`, timeout_ms: 700 });
    assert.equal(result.isError, true);
    assert.match(result.output, /^timed out after 0\.7 s/);
    await waitUntil(() => processesRunning(marker) === 0, 'no sleep to survive, the double-forked one included');
  });

  it('on abort kills everything the command started inside the sandbox', async () => {
    const marker = `sleep 3172.${process.pid}`;
    const controller = new AbortController();
    const running = tool.execute({ command: `${marker} & ${marker}` }, { signal: controller.signal });
    await waitUntil(() => processesRunning(marker) === 2, 'both sleeps to run');
    controller.abort();
    const result = await running;
    assert.match(result.output, /^stopped by the caller \(aborted\)/);
    await waitUntil(() => processesRunning(marker) === 0, 'no sleep to survive the abort');
  });

  it('a command stopped after hitting a boundary is told so too (as one that timed out is); unconfined, the same output gets no note', async () => {
    // Stopped once its output shows the failure: nothing here depends on how long anything takes.
    const controller = new AbortController();
    let seen = '';
    const onOutput = (chunk: string) => ((seen += chunk), /Could not resolve host/.test(seen) && controller.abort());
    const result = await tool.execute({ command: 'git ls-remote https://example.invalid/repo.git; sleep 3174' }, { signal: controller.signal, onOutput });
    assert.match(result.output, /^stopped by the caller \(aborted\)[\s\S]*Could not resolve host: example\.invalid\nnote: this command ran in savepoint's sandbox, which has no network/);
    assert.equal(result.note, 'sandbox: no network');
    const unconfined = await createRunBashTool(repo.root, { kind: 'none' }).execute({ command: 'echo "curl: (6) Could not resolve host: example.invalid"; exit 6' });
    assert.equal(unconfined.output, 'exit 6\ncurl: (6) Could not resolve host: example.invalid');
    assert.equal(unconfined.note, undefined);
  });

  it('a process that left the group (setsid) dies with the sandbox when bash exits: nothing holds the output, nothing is named', async () => {
    const marker = `sleep 3175.${process.pid}`;
    const result = await tool.execute({ command: `setsid bash -c 'echo > escaped.ready; exec ${marker}' & until [ -s escaped.ready ]; do sleep 0.01; done; echo started` });
    assert.equal(result.output, 'exit 0\nstarted');
    assert.equal(result.note, undefined);
    await waitUntil(() => processesRunning(marker) === 0, 'the setsid sleep to be killed with the sandbox');
  });

  it('on timeout a process that left the group (setsid) is killed with the sandbox too', async () => {
    const marker = `sleep 3176.${process.pid}`;
    // 2 s: the sandbox, the setsid process and the output come before the timeout, also on a loaded machine.
    const result = await tool.execute({ command: `setsid bash -c 'echo > timed.ready; exec ${marker}' & until [ -s timed.ready ]; do sleep 0.01; done; echo started; ${marker}`, timeout_ms: 2000 });
    assert.equal(result.output, 'timed out after 2 s; the command and every process it started were killed\nstarted');
    assert.equal(result.note, undefined);
    await waitUntil(() => processesRunning(marker) === 0, 'no sleep to survive, the setsid one included');
  });

  // The suite's repositories live in the runner's own temporary folder (a RAM file system when there
  // is one): a person's under /tmp is made here, because the sandbox's /tmp is a private one and
  // the working tree must be bound over it.
  it('a repository under /tmp is the working tree inside the sandbox, over its private /tmp', async () => {
    const inTmp = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true, under: '/tmp' });
    scratch.defer(() => inTmp.remove());
    const outside = join('/tmp', `savepoint-outside-${process.pid}.txt`);
    writeFileSync(outside, 'outside\n');
    scratch.defer(() => rmSync(outside, { force: true }));
    const inTmpTool = createRunBashTool(inTmp.root, { kind: 'bwrap' }, undefined, spares);
    const result = await inTmpTool.execute({ command: `cat a.txt; echo made > made.txt; test -e ${outside} && echo seen || echo hidden` });
    assert.equal(result.output, 'exit 0\na\nhidden');
    assert.equal(readFileSync(join(inTmp.root, 'made.txt'), 'utf8'), 'made\n');
  });

  it('ends background processes when the command ends', async () => {
    const marker = `sleep 3173.${process.pid}`;
    const result = await tool.execute({ command: `(${marker}; touch waited.txt) & echo started` });
    assert.equal(result.output, 'exit 0\nstarted');
    assert.equal(existsSync(join(repo.root, 'waited.txt')), false, 'the command waited for its background process');
    await waitUntil(() => processesRunning(marker) === 0, 'the background sleep to end with the command');
  });
});
