// `--json` on run, resume and continue through the real CLI: every stdout line is one JSON object
// with a known `type` and a `time`; a live run has run-started, step-started / step-recorded with
// timings and summaries, text, and ends with final, savings and summary (tokens, estimated cost,
// time); a replay has step-replayed lines; an error is a line {type:'error', code, message} with
// the usual exit code. Without --json, every run (never resumed too) ends with its tokens line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSON_EVENT_TYPES } from '../../src/cli/view/json-lines.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { fakeEnv, runCli, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

const TURNS: ScriptTurn[] = [
  { text: 'Counting.', tools: [{ name: 'run_bash', input: { command: 'echo one; echo two' } }], usage: { inputTokens: 1000, outputTokens: 50 } },
  { text: 'Counted to two.', usage: { inputTokens: 1200, outputTokens: 20 } },
  { text: 'And to three.', usage: { inputTokens: 1400, outputTokens: 10 } },
];

type Line = Record<string, unknown> & { type: string; time: string };

// Every stdout line parsed; each must be a JSON object with a known type and an ISO time.
function lines(stdout: string): Line[] {
  const parsed = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Line);
  for (const line of parsed) {
    assert.ok((JSON_EVENT_TYPES as readonly string[]).includes(line.type), `unknown type ${line.type}`);
    assert.ok(!Number.isNaN(Date.parse(line.time)), `time of ${line.type}`);
  }
  return parsed;
}

describe('--json', { concurrency: true }, () => {
  test('run: run-started, step lines with timings and summaries, text, output, then final, savings and summary', async () => {
    const repo = await scratch.repo({ 'README.md': '# json\n' });
    const fake = await scratch.fake(TURNS);
    const run = await runCli(['run', '--yes', '--json', 'count to two'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr);
    const events = lines(run.stdout);
    assert.equal(events[0]!.type, 'run-started');
    assert.equal(events[0]!.openedAs, 'new');
    assert.deepEqual(events.slice(-3).map((e) => e.type), ['final', 'savings', 'summary']);
    const recorded = events.filter((e) => e.type === 'step-recorded');
    assert.deepEqual(recorded.map((e) => [e.position, e.kind]), [[1, 'model'], [2, 'run_bash'], [3, 'model']]);
    assert.equal(events.filter((e) => e.type === 'step-started').length, 3);
    assert.match(String(recorded[1]!.summary), /^exit 0: two/);
    assert.equal(typeof recorded[1]!.durationMs, 'number');
    assert.equal(recorded[1]!.isError, false);
    assert.equal(recorded[1]!.note, null, 'a command that hit no sandbox boundary has no note');
    // How commands run, said before the first step (a run with no terminal gets a sandbox or stops).
    const sandbox = events.findIndex((e) => e.type === 'sandbox');
    assert.ok(sandbox > 0 && sandbox < events.findIndex((e) => e.type === 'step-started'), 'the sandbox event comes before the first step');
    const { kind, network, gitWrites, choice } = events[sandbox]!;
    assert.deepEqual({ kind, network, gitWrites, choice }, { kind: 'bwrap', network: false, gitWrites: false, choice: 'default' });
    assert.deepEqual(recorded[0]!.usage, { inputTokens: 1000, outputTokens: 50, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
    assert.match(events.filter((e) => e.type === 'output').map((e) => e.chunk).join(''), /one\ntwo\n/);
    assert.match(events.filter((e) => e.type === 'text').map((e) => e.text).join(''), /Counting\.[\s\S]*Counted to two\./);
    const final = events.at(-3)!;
    assert.deepEqual([final.status, final.final, final.steps], ['finished', 'Counted to two.', 3]);
    const summary = events.at(-1)! as Line & { tokens: { input: number; output: number }; estimatedCostUsd: number; elapsedMs: number };
    assert.deepEqual([summary.tokens.input, summary.tokens.output], [2200, 70]);
    assert.ok(summary.estimatedCostUsd > 0);
    assert.equal(typeof summary.elapsedMs, 'number');
    assert.doesNotMatch(run.stdout, /REPLAYED|LIVE|Final answer/, 'nothing for people on stdout');
  });

  test('without --json a run ends with its tokens, estimated cost and time; continue and resume: replayed steps as step-replayed lines with their original timings', async () => {
    const repo = await scratch.repo({ 'README.md': '# json\n' });
    const fake = await scratch.fake(TURNS);
    const run = await runCli(['run', '--yes', 'count to two'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 0, run.stderr);
    const last = run.stdout.trimEnd().split('\n').at(-1)!;
    assert.match(last, /^Tokens 2,200 in, 70 out \(<\$0\.01 estimated\) · 2 model calls · 3 steps \(0 replayed, 3 live\) · [\d.]+ (ms|s)$/);
    const again = await runCli(['run', 'count to two'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.match(again.stdout.trimEnd().split('\n').at(-1)!, /^Tokens 2,200 in, 70 out .* 3 steps \(3 replayed, 0 live\)/);

    const next = await runCli(['continue', '--yes', '--json', 'now to three'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(next.code, 0, next.stderr);
    const events = lines(next.stdout);
    assert.equal(events[0]!.openedAs, 'continuing');
    const replayed = events.filter((e) => e.type === 'step-replayed');
    assert.deepEqual(replayed.map((e) => e.position), [1, 2, 3]);
    assert.equal(typeof replayed[1]!.originalDurationMs, 'number');
    assert.deepEqual(events.filter((e) => e.type === 'step-recorded').map((e) => e.kind), ['user', 'model']);
    const savings = events.find((e) => e.type === 'savings') as Line & { replayedSteps: number; modelCalls: number; commands: number };
    // Replaying a finished run's steps to rebuild the conversation a follow-up continues saves nothing.
    assert.deepEqual([savings.replayedSteps, savings.modelCalls, savings.commands], [0, 0, 0]);
    const summary = events.at(-1) as Line & { tokens: { input: number }; replayedSteps: number; liveSteps: number };
    assert.deepEqual([summary.tokens.input, summary.replayedSteps, summary.liveSteps], [3600, 3, 2]);

    // resume with every run finished: an error line, and exit 1.
    const resumed = await runCli(['resume', '--json', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 1);
    assert.deepEqual(lines(resumed.stdout).map((e) => [e.type, e.code]), [['error', 'ENORUN']]);
  });

  test('resume of a killed run, and an error as {type:"error", code, message} with the usual exit code', async () => {
    const repo = await scratch.repo({ 'README.md': '# json\n' });
    const hold = new Set([1]);
    const fake = await scratch.fake(TURNS, hold);
    const live = startCli(['run', '--yes', 'count to two'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length === 2, 'the second model call', { child: live });
    live.kill();
    await live.result;
    hold.delete(1);
    const resumed = await runCli(['resume', '--yes', '--json'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr);
    const events = lines(resumed.stdout);
    assert.equal(events[0]!.openedAs, 'resuming');
    assert.deepEqual(events.filter((e) => e.type === 'step-replayed').map((e) => e.position), [1, 2]);
    assert.equal(events.at(-3)!.final, 'Counted to two.');

    const noKey = await runCli(['run', '--yes', '--json', 'something new'], { cwd: repo.root, env: { ANTHROPIC_BASE_URL: fake.url } });
    assert.equal(noKey.code, 1);
    const [error, ...rest] = lines(noKey.stdout);
    assert.deepEqual(rest, []);
    assert.equal(error!.type, 'error');
    assert.equal(error!.code, 'ENOCREDENTIALS');
    assert.match(String(error!.message), /ANTHROPIC_API_KEY/);
    assert.match(noKey.stderr, /^savepoint: /m, 'people still read the message on stderr');
  });
});
