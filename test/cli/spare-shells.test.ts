// A run starts each next command's shell while its model is asked (src/tools/spare-shell.ts): the
// real CLI against the fake Messages API, whose answers take 800 ms, as a model thinks. Each
// command prints how long its own process has lived: the first was started cold, when its step
// began; the ones after were started during the model's answer before them, so they are older
// than the step's own work. Sandboxed and not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { fakeEnv, lastToolResults, resultText, runCli } from '../helpers/cli.js';

const scratch = useScratch();

// The age of the shell running it, in seconds, from its start time in /proc (in clock ticks since boot).
const AGE = 'read -r up _ < /proc/uptime; set -- $(cut -d")" -f2- /proc/$$/stat); awk -v u="$up" -v s="${20}" -v t="$(getconf CLK_TCK)" \'BEGIN { printf "age %.2f\\n", u - s / t }\'';
const THINK_MS = 800;

for (const sandboxed of [false, true]) {
  describe(`a run's commands${sandboxed ? ', sandboxed' : ', --no-sandbox'}`, { skip: sandboxed ? noSandboxReason() : undefined }, () => {
    test('after the first, each one runs in a shell started while the model answered', async () => {
      const turns: ScriptTurn[] = [
        ...Array.from({ length: 3 }, () => ({ tools: [{ name: 'run_bash', input: { command: AGE } }], delayMs: THINK_MS })),
        { text: 'Three ages.', delayMs: THINK_MS },
      ];
      const server = await scratch.fake(turns);
      const dir = await scratch.repo({ 'README.md': '# ages\n' });
      const run = await runCli(['run', '--yes', ...(sandboxed ? [] : ['--no-sandbox']), 'print the ages'], { cwd: dir.root, env: fakeEnv(server) });
      assert.equal(run.code, 0, run.stderr);
      const ages = server.requests.slice(1).map((body) => {
        const output = resultText(lastToolResults(body)[0]!);
        const age = /age (\d+\.\d+)/.exec(output);
        assert.ok(age, output);
        return Number(age[1]);
      });
      assert.equal(ages.length, 3);
      // Cold: started by its own step, a few ms old (a loaded machine: well under the model's 800 ms).
      assert.ok(ages[0]! < 0.5, `the first command was started cold: ${ages.join(', ')}`);
      // Started as the model was asked, it waited through the answer (800 ms) before its command came.
      for (const age of ages.slice(1)) assert.ok(age >= 0.5, `a later command ran in a shell started during the model's answer: ${ages.join(', ')}`);
    });
  });
}
