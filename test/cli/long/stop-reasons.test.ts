// The model's stop reasons, through the real CLI against a test server that stops answers at
// max_tokens as a real model does: a tool call from a cut-off answer never runs, even when its
// partial input parses into a runnable call (`"timeout_ms": 60000` cut after the 6), and the model is told so; a text
// answer cut off is continued, not taken as the final answer; the stop reason is journaled and shown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertStepModes, assertToolPairing, fakeEnv, journalJson, journalPaths, lastToolResults, resultText, runCli } from '../../helpers/cli.js';

const scratch = useScratch();

const COMMAND = { command: 'echo ran > ran.txt', timeout_ms: 60000 };
const json = JSON.stringify(COMMAND);
// The limit falls right after the 6 of 60000: text and input together fill max_tokens * 4 characters.
const upTo = json.indexOf('60000') + 1;
const text = 'Running it.'.padEnd(4 - (upTo % 4) + 12, ' ');
const MAX_TOKENS = (text.length + upTo) / 4;
const LONG = 'The command was not run because my answer was cut off, so here is what I would do instead, at length: ';

const TURNS: ScriptTurn[] = [
  { text, tools: [{ name: 'run_bash', input: COMMAND }] },
  { text: LONG.repeat(3) },
  { text: 'and that is all.' },
];

describe('stop reasons', () => {
  test('a call cut off at max_tokens never runs and the model is told; a cut-off text is continued', async () => {
    assert.ok(Number.isInteger(MAX_TOKENS));
    const repo = await scratch.repo({ 'README.md': '# cut\n' });
    const fake = await scratch.fake(TURNS);
    const task = 'run the command';
    const run = await runCli(['run', '--yes', '--max-tokens', String(MAX_TOKENS), task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false, 'the cut-off command never ran');
    assert.match(run.stdout, /model turn 1\s+→ calls run_bash \(cut off at max_tokens\)/);
    assert.match(run.stdout, /model turn 2\s+→ answers ".*" \(cut off at max_tokens\)/);

    // The partial input parsed into a runnable call (the SDK drops the cut number; a server that
    // sends the input whole would give 6): the command is complete, the timeout is not 60000.
    const paths = await journalPaths(repo.root);
    const first = await journalJson<{ result: { stopReason: string; content: Array<{ type: string; input?: { command?: string; timeout_ms?: number } }> } }>(repo.root, paths.find((p) => p.endsWith('000001-model.json'))!);
    assert.equal(first.result.stopReason, 'max_tokens');
    const input = first.result.content.find((b) => b.type === 'tool_use')?.input;
    assert.equal(input?.command, COMMAND.command);
    assert.notEqual(input?.timeout_ms, 60000);
    assert.equal(paths.filter((p) => p.endsWith('-run_bash.json')).length, 0, 'no run_bash step at all');

    const [told] = lastToolResults(fake.requests[1]!);
    assert.equal(told!.is_error, true);
    assert.match(resultText(told!), /cut off at the max_tokens limit \(\d+ tokens\) before this run_bash call was complete, so it was not run/);
    assert.match(JSON.stringify(fake.requests[2]!.messages.at(-1)), /Continue exactly where it stopped/);
    assertToolPairing(fake.requests);

    // The final answer is the cut-off text and its continuation, not the cut-off part alone.
    const cut = LONG.repeat(3).slice(0, MAX_TOKENS * 4);
    assert.ok(run.stdout.includes(`Final answer\n${`${cut}and that is all.`.trim()}`), run.stdout);

    const again = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 3);
    assert.equal(fake.requests.length, 3, 'the replay sends nothing');
    const id = /run (\S+)/.exec(run.stdout)![1]!;
    const shown = await runCli(['show', id, '1'], { cwd: repo.root });
    assert.match(shown.stdout, /stop reason: max_tokens/);
  });
});
