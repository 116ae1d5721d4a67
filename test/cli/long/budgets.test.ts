// Limits are the user's: no default limit stops a long run, and --max-steps, --max-turns and
// --max-cost stop cleanly, with a message naming the limit and how to go on, and exit code 3.
// The same command with a higher limit then goes on by replay.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MODEL } from '../../../src/model/defaults.js';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertNoStack, assertStepModes, assertToolPairing, assistantMessages, fakeEnv, runCli } from '../../helpers/cli.js';
import { startFakeAnthropic } from '../../helpers/fake-anthropic.js';

const scratch = useScratch();

// Reads README.md `reads` times, one model turn each, then answers.
function reading(reads: number): (body: { messages: { role: string }[] }) => ScriptTurn {
  return (body) => {
    const turn = body.messages.filter((m) => m.role === 'assistant').length;
    return turn < reads ? { tools: [{ name: 'read_file', input: { path: 'README.md' } }], usage: { inputTokens: 100_000, outputTokens: 1_000 } } : { text: `Read it ${reads} times.` };
  };
}

describe('limits', { concurrency: true }, () => {
  test('a run of more than 200 steps runs to its end when no limit is given', async () => {
    const repo = await scratch.repo({ 'README.md': '# long\n' });
    // A script (no HTTP server: its 106 requests are not what this checks), reporting the default
    // model's id so that its usage is priced as the live model's would be: no default cost limit either.
    const turn = reading(105);
    const turns = Array.from({ length: 106 }, (_, index) => turn({ messages: Array.from({ length: index }, () => ({ role: 'assistant' })) }));
    const script = join(scratch.dir('savepoint-script-'), 'long.json');
    writeFileSync(script, JSON.stringify({ model: DEFAULT_MODEL, turns }));
    const run = await runCli(['run', '--yes', '--model', `script:${script}`, 'read it many times'], { cwd: repo.root, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(assertStepModes(run.stdout, 0).length, 211);
    assert.match(run.stdout, /Read it 105 times\./);
    assert.doesNotMatch(run.stdout, /--max-steps/);
  });

  test('--max-turns stops before the next model call with exit 3, and a higher limit goes on by replay', async () => {
    const repo = await scratch.repo({ 'README.md': '# turns\n' });
    const fake = await startFakeAnthropic({ turns: reading(3) });
    scratch.defer(() => fake.close());
    const two = await runCli(['run', '--yes', '--max-turns', '2', 'read a few times'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(two.code, 3, two.stderr);
    assert.equal(assertStepModes(two.stdout, 0).length, 4, 'two model calls and their reads');
    assert.match(two.stdout, /Stopped at the --max-turns limit of 2 model calls/);
    assert.match(two.stdout, /higher --max-turns \(or without it\) to go on/);
    assertNoStack(two.stdout + two.stderr);
    assert.equal(fake.requests.length, 2);

    const all = await runCli(['run', '--yes', '--max-turns', '10', 'read a few times'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(all.code, 0, all.stderr);
    assert.equal(assertStepModes(all.stdout, 4).length, 7);
    assert.deepEqual(fake.requests.map(assistantMessages), [0, 1, 2, 3], 'each turn asked once');
    assertToolPairing(fake.requests);
  });

  test('--max-cost stops once the estimated cost reaches the limit, with exit 3 and the cost so far', async () => {
    const repo = await scratch.repo({ 'README.md': '# cost\n' });
    const fake = await startFakeAnthropic({ turns: reading(5) });
    scratch.defer(() => fake.close());
    // Each turn: 100,000 tokens in and 1,000 out at the assumed Sonnet rates, $0.315.
    const capped = await runCli(['run', '--yes', '--max-cost', '0.5', 'read for a price'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(capped.code, 3, capped.stderr);
    assert.match(capped.stdout, /Stopped at the --max-cost limit of \$0\.5: the run's model calls have cost an estimated \$0\.63/);
    assert.equal(fake.requests.length, 2, 'the second call passed the limit, and no third was made');
    const bad = await runCli(['run', '--yes', '--max-cost', 'lots', 'read for a price'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-cost needs a number above 0, not "lots"/);
  });
});
