// The roll-up kill tests' shared parts (test/git/pack-rollup.test.ts):
// the step files test/helpers/rollup-child.ts appends, and a loop that starts that child again and
// again, each time killing it with SIGKILL a little later, and collects the steps it reported.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tsChild } from './library.js';

/** Where the child puts step `i` on the journal branch. */
export function rollupStepPath(i: number): string {
  return `runs/r/steps/${String(Math.floor(i / 100)).padStart(3, '0')}/${String(i).padStart(6, '0')}-run_bash.json`;
}

/** What the child writes for step `i`. */
export function rollupStepContent(i: number): string {
  return `${JSON.stringify({ step: i, output: `exit 0\n${'a line of output\n'.repeat(20)}${i}` })}\n`;
}

/**
 * Runs the child on `root` `rounds` times, each from the step after the last one it reported,
 * SIGKILLing it `delayMs(round)` after its first append (`tidy`: the child waits for a run's-end
 * roll-up every ten appends); returns every step whose append the child saw return.
 */
export async function appendUntilKilled(root: string, options: { rounds: number; delayMs: (round: number) => number; tidy?: boolean }): Promise<Set<number>> {
  const child = tsChild(fileURLToPath(new URL('./rollup-child.ts', import.meta.url)));
  const returned = new Set<number>();
  let next = 0;
  for (let round = 0; round < options.rounds; round++) {
    const proc = spawn(process.execPath, [...child.execArgv, child.file, root, String(next), ...(options.tidy ? ['tidy'] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (const match of out.matchAll(/^appended (\d+)$/gm)) returned.add(Number(match[1]));
    });
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // Up and appending (the loader takes a while), then killed a little later each round.
    while (!/appended/.test(out) && proc.exitCode === null) await sleep(10);
    await sleep(options.delayMs(round));
    proc.kill('SIGKILL');
    await new Promise((resolve) => proc.once('close', resolve));
    assert.match(out, /appended/, err);
    next = Math.max(...returned) + 1;
  }
  return returned;
}
