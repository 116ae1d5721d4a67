// Background commands, in process: run_bash with run_in_background answers at once with the run's
// next id, bash_output reads what came since the last read and whether it still runs, kill_bash
// stops the whole group (and says so again, harmlessly), ids are counted from the journal, and an
// id an earlier savepoint started is answered with when it stopped.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { BackgroundCommands, createBashOutputTool, createKillBashTool, createRunBashTool, type BackgroundJournal } from '../../src/tools/index.js';
import { MAX_UNREAD_BYTES } from '../../src/os/background-process.js';
import { groupRuns } from '../../src/os/proc.js';
import { PermissionRules } from '../../src/settings/index.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// The three tools on one run's background commands in `root`.
function toolsOn(root: string, background: BackgroundCommands, sandbox: { kind: 'bwrap' | 'none' } = { kind: 'none' }) {
  return { bash: createRunBashTool(root, sandbox, undefined, undefined, background), output: createBashOutputTool(background), kill: createKillBashTool(background) };
}

// Reads `id` until `done` holds for what was read so far (the texts joined), or fails after 60 s (a bound for a loaded machine, not a duration asserted).
async function readUntil(tools: ReturnType<typeof toolsOn>, id: string, done: (all: string, last: string) => boolean): Promise<string> {
  let all = '';
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const { output } = await tools.output.execute({ id });
    all += `${output}\n`;
    if (done(all, output)) return all;
    await sleep(20);
  }
  assert.fail(`bash_output ${id} never gave what the test waits for; it gave:\n${all}`);
}

// The pid a command wrote to `file` (its process group's), once written.
async function pidIn(file: string): Promise<number> {
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(20)) {
    try {
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (pid > 0) return pid;
    } catch {
      // not written yet
    }
  }
  assert.fail(`${file} was never written`);
}

// The process group of `pid`, from /proc (field 5 of its stat).
function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('background commands', () => {
  it('start at once with bg-1, bg-2, are read a piece at a time with their end, and kill_bash stops the whole group, twice harmlessly', async () => {
    const repo = await scratch.repo();
    const background = new BackgroundCommands('run-a');
    const tools = toolsOn(repo.root, background);
    scratch.defer(() => background.stopAll());

    const started = await tools.bash.execute({ command: 'echo first; sleep 0.2; echo second; sleep 60', run_in_background: true });
    assert.equal(started.isError, false);
    assert.equal(started.summary, 'started bg-1');
    assert.match(started.output, /bg-1.*bash_output \{"id": "bg-1"\}.*kill_bash/s);
    assert.equal(tools.bash.describe({ command: 'npm run dev', run_in_background: true }), 'run_bash "npm run dev" in the background');

    // Each read gives only what came since the last one, and says it still runs.
    const read = await readUntil(tools, 'bg-1', (all) => all.includes('second'));
    assert.equal(read.match(/first/g)?.length, 1, read);
    assert.match(read, /^bg-1: still running/m);
    const quiet = await tools.output.execute({ id: 'bg-1' });
    assert.match(quiet.output, /^bg-1: still running .*\n\(no new output\)$/);

    const ended = await tools.bash.execute({ command: 'echo done; exit 3', run_in_background: true });
    assert.equal(ended.summary, 'started bg-2');
    const endRead = await readUntil(tools, 'bg-2', (_all, last) => last.includes('exited'));
    assert.match(endRead, /done/);
    assert.match(endRead, /bg-2: exited with code 3/);

    // kill_bash takes down what the command started too: its whole process group.
    const pidFile = join(repo.root, 'child.pid');
    await tools.bash.execute({ command: `sleep 60 & echo $! > ${pidFile}; wait`, run_in_background: true });
    const child = await pidIn(pidFile);
    const group = groupOf(child);
    const killed = await tools.kill.execute({ id: 'bg-3' });
    assert.equal(killed.isError, false);
    assert.equal(killed.summary, 'stopped bg-3');
    assert.equal(groupRuns(group), false, 'the command\'s group is gone once kill_bash answers');
    const again = await tools.kill.execute({ id: 'bg-3' });
    assert.equal(again.isError, false);
    assert.match(again.output, /^bg-3 had already ended \(stopped by kill_bash\): nothing to stop\./);
    assert.match((await tools.output.execute({ id: 'bg-3' })).output, /^bg-3: stopped by kill_bash/);

    // `wait` waits for the command's own jobs only: nothing savepoint adds is its child.
    await tools.bash.execute({ command: 'sleep 0.1 & wait; echo waited', run_in_background: true });
    const waited = await readUntil(tools, 'bg-4', (_all, last) => last.includes('exited'));
    assert.match(waited, /bg-4: exited with code 0/);
    assert.match(waited, /^waited$/m);

    const unknown = await tools.output.execute({ id: 'bg-9' });
    assert.equal(unknown.isError, true);
    assert.match(unknown.output, /no background command "bg-9".*bg-1, bg-2, bg-3, bg-4/s);
  });

  it('count ids from the journal, and answer for one an earlier savepoint started that it stopped with it, and when', async () => {
    const repo = await scratch.repo();
    const recorded = { starts: 4 }; // three before this process, the one starting now included
    const journal: BackgroundJournal = {
      startsRecorded: async () => recorded.starts,
      pastStart: async (n) => (n === 2 ? { command: 'npm run dev', step: 5, stoppedAt: '2026-01-02T03:04:05.000Z', stoppedHow: 'that savepoint process was killed' } : undefined),
    };
    const background = new BackgroundCommands('run-b');
    background.useJournal(journal);
    const tools = toolsOn(repo.root, background);
    scratch.defer(() => background.stopAll());

    assert.equal((await tools.bash.execute({ command: 'sleep 60', run_in_background: true })).summary, 'started bg-4');
    recorded.starts = 5;
    assert.equal((await tools.bash.execute({ command: 'sleep 60', run_in_background: true })).summary, 'started bg-5');
    // Another process went on with the run meanwhile: its starts are never handed out again.
    recorded.starts = 9;
    assert.equal((await tools.bash.execute({ command: 'sleep 60', run_in_background: true })).summary, 'started bg-9');

    const past = await tools.output.execute({ id: 'bg-2' });
    assert.equal(past.isError, false);
    assert.match(past.output, /^bg-2 \(`npm run dev`, started at step #5\) is not running: it stopped with savepoint at 2026-01-02T03:04:05.000Z: that savepoint process was killed\./);
    assert.match(past.output, /does not start them again/);
    const pastKill = await tools.kill.execute({ id: 'bg-2' });
    assert.match(pastKill.output, /There is nothing to stop\./);

    // The run's end stops what still runs.
    await background.stopAll();
    assert.match((await tools.output.execute({ id: 'bg-4' })).output, /^bg-4: stopped when the run ended/);
  });

  it(`keep at most ${MAX_UNREAD_BYTES} bytes unread, and say how many were dropped`, async () => {
    const repo = await scratch.repo();
    const background = new BackgroundCommands('run-c');
    const tools = toolsOn(repo.root, background);
    scratch.defer(() => background.stopAll());
    // More than a pipe holds past the bound, so once the command has written it all, savepoint has
    // read (and dropped) well past the bound whatever the pipe still holds.
    const size = MAX_UNREAD_BYTES + 300_000;
    const marker = join(repo.root, 'written');
    await tools.bash.execute({ command: `head -c ${size} /dev/zero | tr '\\0' a; touch ${marker}; sleep 60`, run_in_background: true });
    for (const until = Date.now() + 60_000; !existsSync(marker); await sleep(20)) assert.ok(Date.now() < until, 'the command never wrote its output');
    const read = await tools.output.execute({ id: 'bg-1' });
    const dropped = Number(/^\[(\d+) bytes of earlier output were dropped: savepoint keeps at most 1 MB of unread output per background command; read more often\]$/m.exec(read.output)?.[1]);
    assert.ok(dropped > 100_000 && dropped <= size - MAX_UNREAD_BYTES, read.output.slice(0, 300));
    assert.ok(read.output.length < MAX_UNREAD_BYTES + 1000);
  });

  it('run in the sandbox like any command', { skip: noSandboxReason() }, async () => {
    const repo = await scratch.repo();
    const background = new BackgroundCommands('run-d');
    const tools = toolsOn(repo.root, background, { kind: 'bwrap' });
    scratch.defer(() => background.stopAll());
    await tools.bash.execute({ command: 'touch .git/planted; echo "exit $?"; echo made > inside.txt; cat inside.txt', run_in_background: true });
    const read = await readUntil(tools, 'bg-1', (all) => all.includes('exited'));
    assert.match(read, /Read-only file system/);
    assert.match(read, /exit 1/);
    assert.match(read, /made/);
  });

  it('ask as run_bash does: a run_bash rule covers a start, and the reads and stops ask nothing', async () => {
    const background = new BackgroundCommands('run-e');
    const tools = toolsOn('/nonexistent-root', background);
    const start = { command: 'npm run dev', run_in_background: true };
    assert.equal(tools.bash.needsApproval(start), true);
    assert.equal(tools.bash.isRepeatSafe(start), false, 'its intent is recorded first, fenced like any command');
    assert.equal(tools.output.needsApproval({ id: 'bg-1' }), false);
    assert.equal(tools.kill.needsApproval({ id: 'bg-1' }), false);
    const rules = new PermissionRules({ allow: ['run_bash(npm run dev*)'], deny: ['KillShell'], root: '/nonexistent-root' });
    assert.equal(rules.decide('run_bash', start)?.verdict, 'allow');
    assert.equal(rules.decide('run_bash', { ...start, command: 'npm run dev; curl example.com' }), undefined, 'a line the rule does not cover asks');
    assert.equal(rules.decide('kill_bash', { id: 'bg-1' })?.verdict, 'deny', "Claude Code's KillShell names kill_bash");
  });

  it('kill_bash answers when a process that left the group still holds the output open (unconfined)', async () => {
    const repo = await scratch.repo();
    const background = new BackgroundCommands('run-f');
    const tools = toolsOn(repo.root, background);
    scratch.defer(() => background.stopAll());
    const pidFile = join(repo.root, 'daemon.pid');
    await tools.bash.execute({ command: `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & sleep 300`, run_in_background: true });
    const daemon = await pidIn(pidFile);
    scratch.defer(() => {
      try {
        process.kill(daemon, 'SIGKILL'); // it left the group on purpose: run_bash's rule, outside the sandbox
      } catch {
        // already gone
      }
    });
    const killed = await tools.kill.execute({ id: 'bg-1' });
    assert.equal(killed.summary, 'stopped bg-1');
  });
});
