// Every bash savepoint starts for a command starts the same way whatever savepoint's own
// environment (src/tools/sandbox.ts): `bash --norc --noprofile`. Without --norc, a bash whose
// stdin is a socket (a hook's: Node's pipes are Unix sockets) or that sees SSH_CLIENT, and whose
// SHLVL is unset or 0 (savepoint started by cron, systemd, an editor, a CI runner), takes itself
// for sshd's and sources ~/.bashrc: its output mixed into the command's, its PATH, its time. The
// real CLI, started without SHLVL and with SSH_CLIENT, a HOME whose .bashrc echoes a marker and
// writes a file, runs a cold command, one in a spare shell, one in the background (and reads it),
// and a PostToolUse hook after each; no output holds the marker and no file was written.
// Unconfined and in the sandbox.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { fakeEnv, lastToolResults, resultText, runCli } from '../helpers/cli.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

const MARKER = 'bashrc-was-read';

// Waits for the background command's file, polling (60 s at most: a loaded machine).
const WAIT_FOR_BACKGROUND = 'for i in $(seq 600); do [ -e bg-done ] && break; sleep 0.1; done; [ -e bg-done ] && echo background ended';

for (const sandboxed of [false, true]) {
  describe(`bash for a command${sandboxed ? ', sandboxed' : ', --no-sandbox'}`, { skip: sandboxed ? noSandboxReason() : undefined }, () => {
    test("reads no ~/.bashrc when savepoint runs without SHLVL: cold, in a spare shell, in the background, in a hook", async () => {
      const repo = await scratch.repo();
      // Not under /tmp: the sandbox's /tmp is a private one, where a HOME there would not be seen at all.
      const home = mkdtempSync('/var/tmp/savepoint-home-');
      scratch.defer(() => rmSync(home, { recursive: true, force: true }));
      const ran = join(repo.root, 'bashrc-ran'); // the working tree: writable in the sandbox too
      writeFileSync(join(home, '.bashrc'), `echo ${MARKER}\nprintf '%s\\n' "$$" >> '${ran}'\n`);
      writeFileSync(join(home, '.bash_profile'), `echo ${MARKER}-profile\nprintf 'profile\\n' >> '${ran}'\n`);
      const hookLog = join(home, 'hook.log');
      const config = join(home, '.config');
      mkdirSync(join(config, 'savepoint'), { recursive: true });
      writeFileSync(
        join(config, 'savepoint', 'settings.json'),
        JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'run_bash', hooks: [{ type: 'command', command: `echo hook >> '${hookLog}'` }] }] } }),
      );
      const turns: ScriptTurn[] = [
        { tools: [{ name: 'run_bash', input: { command: 'echo cold' } }] },
        // The model thinks: the spare shell started as it was asked runs this one.
        { tools: [{ name: 'run_bash', input: { command: 'echo warm' } }], delayMs: 500 },
        { tools: [{ name: 'run_bash', input: { command: 'echo in the background; : > bg-done', run_in_background: true } }] },
        { tools: [{ name: 'run_bash', input: { command: WAIT_FOR_BACKGROUND } }] },
        { tools: [{ name: 'bash_output', input: { id: 'bg-1' } }] },
        { text: 'Done.' },
      ];
      const server = await scratch.fake(turns);
      const env = fakeEnv(server, { HOME: home, XDG_CONFIG_HOME: config, SHLVL: undefined, SSH_CLIENT: '192.0.2.1 50000 22' });
      const run = await runCli(['run', '--yes', ...(sandboxed ? [] : ['--no-sandbox']), 'say where you are'], { cwd: repo.root, env });
      assert.equal(run.code, 0, run.stderr);

      const outputs = server.requests.slice(1).map((body) => resultText(lastToolResults(body)[0]!));
      assert.equal(outputs.length, 5);
      assert.match(outputs[0]!, /^exit 0\ncold$/);
      assert.match(outputs[1]!, /^exit 0\nwarm$/);
      assert.match(outputs[3]!, /^exit 0\nbackground ended$/);
      assert.match(outputs[4]!, /in the background/);
      for (const output of outputs) assert.doesNotMatch(output, new RegExp(MARKER), output);
      assert.doesNotMatch(run.stdout, new RegExp(MARKER));
      // The hook ran (after each of the four run_bash steps), and no bash wrote the marker file.
      assert.equal(readFileSync(hookLog, 'utf8'), 'hook\n'.repeat(4));
      assert.equal(existsSync(ran), false, existsSync(ran) ? `~/.bashrc ran in ${readFileSync(ran, 'utf8')}` : '');
    });
  });
}
