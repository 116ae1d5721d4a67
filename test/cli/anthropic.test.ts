// The live model path end to end: the real CLI, the real @anthropic-ai/sdk, and the fake Messages
// API server. Text streams to the terminal as it arrives; an overloaded answer is retried by the
// SDK without the user noticing; a server that keeps failing stops the run with one clear
// paragraph, and once it recovers the identical command goes on from the journal.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic, MessagesBody } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import {
  assertOneParagraph,
  assertStepModes,
  assertToolPairing,
  assistantMessages,
  fakeEnv,
  journalPaths,
  runCli,
  waitUntil,
} from '../helpers/cli.js';
import { plain, SKIP_NO_PTY, startOnPty } from '../helpers/pty.js';

const scratch = useScratch();
const repo = (): Promise<TempRepo> => scratch.repo({ 'README.md': '# live\n' });
const fake = (turns: ScriptTurn[] | ((body: MessagesBody) => ScriptTurn)): Promise<FakeAnthropic> => scratch.fake(turns);

const TURNS: ScriptTurn[] = [
  { text: 'Reading the readme.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { tools: [{ name: 'list_files', input: {} }] },
  { text: 'The repository holds a readme.' },
];

describe('the live model through the Anthropic SDK', { concurrency: true }, () => {
  test('a live model turn streams its text to the terminal before the call ends', { skip: SKIP_NO_PTY }, async () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta';
    const server = await fake([{ text, delayMs: 3000 }]);
    const dir = await repo();
    const cli = startOnPty(['run', '--yes', 'say the words'], dir.root, [], { env: fakeEnv(server) as Record<string, string> });
    await waitUntil(() => plain(cli.out).includes('alpha'), 'the first words on the terminal');
    // The answer is still arriving: its end has not come, and its step has not been recorded.
    assert.ok(!plain(cli.out).includes('theta'), plain(cli.out));
    assert.doesNotMatch(plain(cli.out), /#1\s+LIVE/);
    const result = await cli.result;
    const out = plain(result.out);
    assert.equal(result.code, 0, out);
    const streamed = out.indexOf('alpha');
    const step = out.search(/#1\s+LIVE \(running now\)/);
    assert.ok(streamed >= 0 && step > streamed, `the text streams above its step line:\n${out}`);
    assert.match(out.slice(streamed, step).replace(/\s+/g, ' '), /alpha beta gamma delta epsilon zeta eta theta/);
    assert.doesNotMatch(out, /Final answer/, 'streamed on the terminal, the answer is not printed again');
    assert.equal(server.requests[0]!.stream, true);
  });

  // The run is on the default model, which is on no list: the case of a model that gets no notice too.
  test('a 529 overloaded answer is retried by the SDK and the run completes; a model not on the list gets no notice', async () => {
    const server = await fake(TURNS);
    server.failNext(529);
    const dir = await repo();
    const run = await runCli(['run', '--yes', 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /savepoint:/);
    assert.deepEqual(server.requests.map(assistantMessages), [0, 0, 1, 2], 'turn 1 asked twice (the 529 and its retry), then on');
    assert.equal(assertStepModes(run.stdout, 0).length, 5);
    assert.match(run.stdout, /The repository holds a readme\./);
    assert.equal((await journalPaths(dir.root)).filter((p) => p.includes('-model')).length, 3, 'one model entry per turn');
    assert.doesNotMatch(run.stdout + run.stderr, /deprecated/);
  });

  test('a persistent 500 stops the run with one clear paragraph, and after the server recovers the identical command resumes', async () => {
    let server: FakeAnthropic | undefined;
    let broken = false;
    server = await fake((body) => {
      const index = assistantMessages(body);
      // Answering turn 1 breaks the server for the next three requests: turn 2 and the SDK's two retries.
      if (index === 0 && !broken) {
        broken = true;
        server!.failNext(500, 3);
      }
      return TURNS[index]!;
    });
    const dir = await repo();
    const failed = await runCli(['run', '--yes', 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(failed.code, 1, failed.stdout);
    const message = assertOneParagraph(failed.stderr);
    assert.match(message, /answered 500/);
    assert.match(message, /after 2 retries/);
    assert.match(message, /run the same command again/);
    assert.deepEqual(server.requests.map(assistantMessages), [0, 1, 1, 1]);
    assert.equal(assertStepModes(failed.stdout, 0).length, 2, 'turn 1 and its tool were recorded');

    // The server answers again now: the finished steps replay and turn 2 goes live.
    const resumed = await runCli(['run', '--yes', 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertStepModes(resumed.stdout, 2);
    assert.match(resumed.stdout, /The repository holds a readme\./);
    assert.deepEqual(server.requests.slice(4).map(assistantMessages), [1, 2]);
    assertToolPairing(server.requests);
  });

  test('an error event in the middle of every streamed answer stops the run after the retries, and the identical command resumes it', async () => {
    const server = await fake(TURNS);
    const dir = await repo();
    // The first attempt and both retries break off (one that breaks off once is asked again: test/model/model-service.test.ts).
    server.failNext(529, 3, { midStream: true });
    const failed = await runCli(['run', '--yes', 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(failed.code, 1, failed.stdout);
    assert.match(assertOneParagraph(failed.stderr), /broke off its answer/);
    assert.equal(stepCount(failed.stdout), 0);
    assert.equal(server.requests.length, 3);

    const resumed = await runCli(['run', '--yes', 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertStepModes(resumed.stdout, 0);
    assertToolPairing(server.requests);
  });

  test('a model the SDK lists as deprecated is told once per run in savepoint\'s words, never once per request', async () => {
    // The SDK's own date for the model, as its warning gives it.
    const notice = ((await import('../../src/model/notices.js')).noticeFromSdkWarning(await sdkWarning(DEPRECATED)) as { endOfLife: string }).endOfLife;
    assert.match(notice, /2026/, `the SDK warns about ${DEPRECATED}`);
    const server = await fake(TURNS);
    const dir = await repo();
    const run = await runCli(['run', '--yes', '--model', DEPRECATED, 'look at the readme'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(server.requests.length, 3);
    const all = run.stdout + run.stderr;
    assert.equal(all.split(`Model ${DEPRECATED} is deprecated`).length - 1, 1, all);
    assert.ok(all.replace(/\s+/g, ' ').includes(notice), `the SDK's date is given:\n${all}`);
    assert.doesNotMatch(all, /Please migrate|will reach end-of-life/, 'the SDK prints nothing of its own');
    assert.equal(run.stderr, '');
    // --json: one model-notice event, with the date as data.
    const again = await runCli(['run', '--yes', '--json', '--model', DEPRECATED, 'read the readme again'], { cwd: dir.root, env: fakeEnv(server) });
    assert.equal(again.code, 0, again.stderr);
    const events = again.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(events.filter((e) => e.type === 'model-notice').map(({ time: _time, ...rest }) => rest), [{ type: 'model-notice', notice: 'deprecated', model: DEPRECATED, endOfLife: notice }]);
    assert.doesNotMatch(again.stderr, /deprecated/);
  });
});

// A model id in the SDK's list of deprecated models (resources/messages: DEPRECATED_MODELS).
const DEPRECATED = 'claude-sonnet-4-5';

function stepCount(stdout: string): number {
  return stdout.split('\n').filter((line) => /^\s*#\d+\s/.test(line)).length;
}

// What the SDK prints when a request to `model` is made (the request itself goes nowhere).
async function sdkWarning(model: string): Promise<string> {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (text: string) => void warnings.push(text);
  try {
    const client = new Anthropic({ apiKey: 'none', baseURL: 'http://127.0.0.1:9', maxRetries: 0 });
    client.messages.create({ model, max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
  } finally {
    console.warn = warn;
  }
  return warnings[0] ?? '';
}
