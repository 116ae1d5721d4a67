// A command that starts a daemon (setsid) which keeps the command's output open, run for real by
// the CLI without the sandbox: the step ends once bash has exited (the daemon is not waited on, the
// timeout_ms of 3 s never matters), is recorded with what came, and names the daemon to the model
// and on the person's step line. The daemon is still running when the run has ended.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { fakeEnv, journalJson, journalPaths, lastToolResults, resultText, runCli } from '../helpers/cli.js';

const scratch = useScratch();

// True while the process runs (a zombie counts as dead).
function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('a daemon that keeps the output open neither holds the step nor the run: the step is recorded with what came and names it, and it still runs', async () => {
  const pidFile = join(scratch.dir('savepoint-daemon-'), 'daemon.pid');
  const command = `setsid bash -c 'echo listening; echo $$ > ${pidFile}; exec sleep 300' & until [ -s ${pidFile} ]; do sleep 0.01; done; echo server started`;
  const turns: ScriptTurn[] = [{ tools: [{ name: 'run_bash', input: { command, timeout_ms: 3000 } }] }, { text: 'The server runs.' }];
  const server = await scratch.fake(turns);
  const repo = await scratch.repo({ 'README.md': '# server\n' });
  let pid: number | undefined;
  try {
    const run = await runCli(['run', '--yes', '--no-sandbox', 'start the server'], { cwd: repo.root, env: fakeEnv(server) });
    pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined;
    assert.ok(pid, `the daemon wrote its pid: ${run.stdout}${run.stderr}`);
    assert.equal(isAlive(pid), true, 'the daemon still runs after the run ended');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`run_bash "setsid bash -c .*exit 0: server started.*still running: pid ${pid}`));
    const told = resultText(lastToolResults(server.requests[1]!)[0]!);
    assert.match(told, new RegExp(`^exit 0\\nlistening\\nserver started\\nnote: still running: pid ${pid} \\(sleep 300\\)\\. It left the command's process group`));
    const step = (await journalPaths(repo.root)).find((path) => path.endsWith('-run_bash.json'))!;
    const entry = await journalJson<{ result: { output: string; note?: string } }>(repo.root, step);
    assert.equal(entry.result.output, told);
    assert.equal(entry.result.note, `still running: pid ${pid}`);
  } finally {
    if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});
