import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createRunBashTool } from '../../src/tools/run-bash.js';
import { BASH_STARTUP, type SandboxConfig } from '../../src/tools/sandbox.js';
import { SPARE_LOADER, SpareShells } from '../../src/tools/spare-shell.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

// What a command can see of how it was started: its $0 and shell level, its environment, its open
// descriptors, its signal masks, whether it leads its own process group, where it runs.
const PROBE = [
  'echo "0=$0 SHLVL=$SHLVL dollar-dash=$-"',
  'env | grep -v "^_=" | sort',
  'ls /proc/self/fd | wc -l',
  'grep -E "^(SigBlk|SigIgn)" /proc/self/status',
  'read -r _ _ _ _ pgid _ < /proc/self/stat; [ "$pgid" = "$$" ] && echo "leads its group" || echo "in group $pgid"',
  'pwd',
].join('; ');

// The processes of this test process started with the spare loader, but for the process group
// `running` (a command that took its spare: bubblewrap's command line still names the loader).
function spareProcesses(running?: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (cmdline.includes(SPARE_LOADER) && state !== 'Z' && Number(ppid) === process.pid && Number(pgid) !== running) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

// Runs the loader by hand with `input` on fd 3 (undefined: the pipe closes unwritten), as
// sandboxedCommand starts it (BASH_STARTUP), in `env`.
function runLoader(input: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [...BASH_STARTUP, '-c', SPARE_LOADER], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
    (child.stdio[3] as Writable).end(input ?? '');
  });
}

// Polls until `count` spares wait (their spawn is asynchronous once asked for), for 30 s at least
// (a safety net: a pass returns as soon as they are there; under load 3 s was not always enough).
async function sparesWaiting(count: number, running?: number): Promise<number> {
  for (let i = 0; i < 1500 && spareProcesses(running).length !== count; i++) await sleep(20);
  return spareProcesses(running).length;
}

const bwrapMissing = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--', 'true']).status === 0 ? undefined : 'bubblewrap cannot start here';

for (const sandbox of [{ kind: 'none' }, { kind: 'bwrap' }] as SandboxConfig[]) {
  describe(`a command started ahead in a spare shell (${sandbox.kind === 'bwrap' ? 'in bubblewrap' : 'unconfined'})`, { skip: sandbox.kind === 'bwrap' && bwrapMissing }, () => {
    const scratch = useScratch();
    let repo: TempRepo;
    // Never long: a spare starts only when told the run waits (idle), as a run tells it before asking its model.
    const spares = new SpareShells({ longCommandMs: 3_600_000 });
    let cold: ReturnType<typeof createRunBashTool>;
    let ahead: ReturnType<typeof createRunBashTool>;
    // A command as a run's next one: its spare started while the run waited on the model.
    const next = async (command: string, options?: Parameters<typeof ahead.execute>[1]) => {
      spares.idle();
      assert.equal(await sparesWaiting(1), 1, 'a spare waits for the next command');
      return ahead.execute({ command }, options);
    };
    before(async () => {
      repo = await scratch.repo({ 'a.txt': 'a\n' });
      cold = createRunBashTool(repo.root, sandbox);
      ahead = createRunBashTool(repo.root, sandbox, undefined, spares);
      await ahead.execute({ command: 'true' }); // started cold; it asks for a spare for the next command
    });
    after(() => spares.close());

    it('sees what a command started cold sees: $0, shell level, environment, descriptors, signals, its own group, the root', async () => {
      const warm = await next(PROBE);
      const fresh = await cold.execute({ command: PROBE });
      assert.equal(warm.isError, false, warm.output);
      assert.equal(warm.output, fresh.output);
      if (sandbox.kind === 'none') assert.match(warm.output, /leads its group/); // in bubblewrap's pid namespace the group's leader is outside
    });

    it('runs a script past 64 KB, and one with a NUL, exactly as a cold start does', async () => {
      const long = `: ${'x'.repeat(70_000)}; echo long`;
      assert.deepEqual(await next(long), await cold.execute({ command: long }));
      const nul = 'echo a\0b';
      const [warm, fresh] = [await next(nul).catch((error: Error) => error.message), await cold.execute({ command: nul }).catch((error: Error) => error.message)];
      assert.deepEqual(warm, fresh);
    });

    it('stops a spare whose process group could not be recorded: it runs nothing and none is left waiting', async () => {
      await ahead.execute({ command: 'true' }); // the NUL above started nothing: this one asks for the next spare
      const failed = await next('touch ran.txt', { onSpawn: () => { throw new Error('no room for the record'); } }).then(
        (result) => result.output,
        (error: Error) => error.message,
      );
      assert.match(failed, /no room for the record/);
      // A killed spare lives until the kernel next schedules it: waited for (30 s at least), not 2 s.
      for (let i = 0; i < 1500 && spareProcesses().length > 0; i++) await sleep(20);
      assert.deepEqual(spareProcesses(), []);
      assert.equal(existsSync(join(repo.root, 'ran.txt')), false);
    });

    it('starts beside a short command only once told the run waits, and beside a long one while it runs', async () => {
      await ahead.execute({ command: 'true' }); // the failed record above started nothing after it
      await next('true');
      assert.deepEqual(spareProcesses(), [], 'none started beside a short command');
      spares.idle();
      assert.equal(await sparesWaiting(1), 1, 'started once the run waits');
      const long = new SpareShells({ longCommandMs: 50 });
      try {
        const tool = createRunBashTool(repo.root, sandbox, undefined, long);
        let group = 0;
        const running = tool.execute({ command: 'sleep 30' }, { onSpawn: (pid) => (group = pid), signal: AbortSignal.timeout(1_500) });
        // The one asked for beside `sleep 30`, with this suite's own: two, not counting the running one.
        assert.equal(await sparesWaiting(2, group), 2, 'a long command gets the next spare beside it');
        assert.match((await running).output, /stopped by the caller/);
      } finally {
        await long.close();
      }
      assert.equal(await sparesWaiting(1), 1);
    });

    it('is gone once its owner closes it, and none is started after', async () => {
      await next('true');
      spares.idle();
      assert.equal(await sparesWaiting(1), 1, 'one spare waits for the next command');
      await spares.close();
      assert.deepEqual(spareProcesses(), []);
      assert.equal((await ahead.execute({ command: 'echo still runs' })).output, 'exit 0\nstill runs');
      spares.idle();
      // idle() starts a spare from a setImmediate queued before this one: once this one has run, a
      // spare it started would be spawned (spawn returns once the child runs).
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(spareProcesses(), []);
    });
  });
}

describe('the spare loader', () => {
  it('runs nothing when the pipe closes empty, or without the mark a whole script starts with', async () => {
    assert.deepEqual(await runLoader(undefined), { code: 125, output: '' });
    assert.deepEqual(await runLoader('echo ran'), { code: 125, output: '' });
  });

  it('runs the script it was handed as bash -c would, newlines, quotes and backslashes kept', async () => {
    const script = "printf '%s|' \"$0\" 'a\\b' \"c  d\"\necho\n\n";
    assert.deepEqual(await runLoader(`x${script}`), { code: 0, output: `bash|a\\b|c  d|\n` });
  });

  it("execs the script's bash as it was started itself, without ~/.bashrc where bash would take itself for sshd's", async () => {
    const home = mkdtempSync(join(tmpdir(), 'savepoint-home-'));
    try {
      writeFileSync(join(home, '.bashrc'), 'echo bashrc-was-read\n');
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SSH_CLIENT: '192.0.2.1 50000 22' };
      delete env.SHLVL; // SHLVL unset and SSH_CLIENT set: a bash without --norc sources ~/.bashrc
      assert.deepEqual(await runLoader('xecho ran', env), { code: 0, output: 'ran\n' });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
