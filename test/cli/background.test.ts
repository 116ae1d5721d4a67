// Background commands with the real CLI: a run starts a server-like command in the background
// (run_in_background) and reads it (bash_output); savepoint is killed with SIGKILL while it waits
// for its model, and nothing the command started is left (the process table is polled for the
// command's markers); the resumed run does not start it again, the model asking for its output is
// told it stopped with savepoint and when (that process was killed: the time of its last step), the
// next background command is bg-2, and none is left once the run has ended. Unconfined (the
// watchdog stops the group) and, where bubblewrap starts, in the sandbox (--die-with-parent too).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fakeEnv, journalJson, journalPaths, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { useScratch } from '../helpers/scratch.js';
import { exited, openSession } from '../helpers/tmux.js';
import { processesWith } from '../helpers/processes.js';

const scratch = useScratch();

const modes = [
  { name: 'unconfined (--no-sandbox)', flags: ['--no-sandbox'], skip: undefined },
  { name: 'in the sandbox', flags: [], skip: noSandboxReason() },
];

describe('background commands, with the real CLI', { concurrency: true }, () => {
  for (const mode of modes) {
    test(`${mode.name}: a kill -9 of savepoint leaves none running, a resume does not start it again and the model is told it stopped, and a run's end stops the next`, { skip: mode.skip }, async () => {
      const repo = await scratch.repo();
      const marker = `bgmark${process.pid}x${mode.flags.length}`;
      const script = join(scratch.dir('savepoint-background-'), 'script.json');
      // The command and a process it starts, each named after the marker (exec -a), as a dev server and its worker.
      const start = `echo ready; (exec -a ${marker}-child sleep 300) & exec -a ${marker}-server sleep 300`;
      const turns: unknown[] = [
        { tools: [{ name: 'run_bash', input: { command: start, run_in_background: true } }] },
        { tools: [{ name: 'bash_output', input: { id: 'bg-1' } }] },
        { text: 'thinking it over', delayMs: 60_000 }, // savepoint is killed while it waits for this answer
      ];
      writeFileSync(script, JSON.stringify({ turns }));
      const first = startCli(['run', '--yes', ...mode.flags, '--model', `script:${script}`, 'serve the app'], { cwd: repo.root });
      await waitUntil(() => /bash_output bg-1 +→/.test(first.stdout), 'the read of bg-1 to be recorded', { child: first });
      // Started does not mean forked: the command and the process it started are waited for.
      await waitUntil(() => processesWith(marker).length >= 2, 'the command and the process it started to run', { child: first });
      const run = /run (\S+)/.exec(first.stdout)![1]!;

      first.kill();
      await first.result;
      await waitUntil(() => processesWith(marker).length === 0, `no process with ${marker} left after savepoint was killed`);

      // The resumed run's model asks for bg-1 and starts another command; a run's end stops it.
      const second = `exec -a ${marker}-again sleep 300`;
      turns[2] = { tools: [{ name: 'bash_output', input: { id: 'bg-1' } }, { name: 'run_bash', input: { command: second, run_in_background: true } }] };
      turns[3] = { text: 'The server stopped with savepoint; I started it again.' };
      writeFileSync(script, JSON.stringify({ turns }));
      const resumed = await runCli(['resume', run, '--yes', ...mode.flags], { cwd: repo.root });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /#2 +REPLAYED .*→ started bg-1/);
      assert.match(resumed.stdout, /→ started bg-2/);
      // A killed process lives until the kernel next schedules it: waited for, not judged at one look.
      await waitUntil(() => processesWith(marker).length === 0, 'nothing left once the run has ended: bg-1 not started again, bg-2 stopped with the run');

      // What the model was told, as the journal recorded it.
      const paths = await journalPaths(repo.root);
      const readPath = paths.find((path) => path.startsWith(`runs/${run}/steps/`) && path.endsWith('000006-bash_output.json'));
      assert.ok(readPath, paths.join('\n'));
      const told = (await journalJson<{ result: { output: string; isError: boolean } }>(repo.root, readPath)).result;
      assert.equal(told.isError, false);
      assert.match(told.output, /^bg-1 \(`echo ready;.*`, started at step #2\) is not running: it stopped with savepoint at \d{4}-\d\d-\d\dT[\d:.]+Z: that savepoint process was killed \(a crash or kill -9: no end was recorded\); this is when it recorded its last step, #4/s);
      assert.match(told.output, /does not start them again/);
      const firstRead = (await journalJson<{ result: { output: string } }>(repo.root, paths.find((path) => path.endsWith('000004-bash_output.json'))!)).result;
      assert.match(firstRead.output, /^bg-1: still running/);

      // log reads these steps like any.
      const log = await runCli(['log', run], { cwd: repo.root });
      assert.match(log.stdout, /bash_output bg-1 +→ bg-1 stopped with savepoint at /);
      assert.match(log.stdout, /→ started bg-2/);
    });
  }

  test('in the interactive session: one started at a message still runs at the next (its run opened again), and /exit stops it', async () => {
    const repo = await scratch.repo();
    const marker = `bgmark${process.pid}session`;
    const fake = await scratch.fake([
      { tools: [{ name: 'run_bash', input: { command: `echo ready; exec -a ${marker} sleep 300`, run_in_background: true } }] },
      { text: 'Started it.' },
      { tools: [{ name: 'bash_output', input: { id: 'bg-1' } }] },
      { text: 'It still runs.' },
    ]);
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') } });
    await term.waitFor(/^›\s*$/m);
    term.type('start the server');
    await term.waitFor(/→ answers "Started it\."[\s\S]*^›\s*$/m);
    await waitUntil(() => processesWith(marker).length > 0, 'the background command to run');
    const running = processesWith(marker);
    term.type('is it up?');
    await term.waitFor(/→ answers "It still runs\."[\s\S]*^›\s*$/m);
    assert.match(term.screen(), /bash_output bg-1 +→ bg-1 running/);
    assert.deepEqual(processesWith(marker), running, 'the next message did not stop it as an orphan of its run');
    term.type('/exit');
    assert.equal(await exited(term), 0);
    await waitUntil(() => processesWith(marker).length === 0, `no process with ${marker} left after /exit`);
  });

  test('Ctrl-C stops savepoint and its background command with it', async () => {
    const repo = await scratch.repo();
    const marker = `bgmark${process.pid}ctrlc`;
    const script = join(scratch.dir('savepoint-background-'), 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command: `exec -a ${marker} sleep 300`, run_in_background: true } }] }, { text: 'waiting', delayMs: 60_000 }] }));
    const cli = startCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'serve'], { cwd: repo.root });
    await waitUntil(() => /→ started bg-1/.test(cli.stdout) && processesWith(marker).length > 0, 'the background command to run', { child: cli });
    cli.child.kill('SIGINT');
    assert.equal((await cli.result).code, 130);
    await waitUntil(() => processesWith(marker).length === 0, `no process with ${marker} left after Ctrl-C`);
  });
});
