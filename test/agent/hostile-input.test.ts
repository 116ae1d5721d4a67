// A model that asks for what it must not get: paths out of the repository (by `..`, absolute, and
// through symbolic links), writes into .git, a tool that does not exist, an edit of text that is not
// there, bad input, a flood of output and a failing command. Each one answers the model with an
// error (or the exit code) and the run goes on to its end. Driven through the real CLI and the
// fake Anthropic server, so what is checked is exactly what the model was sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { ScriptTool } from '../../src/model/script-file.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';
import {
  assertFsckClean,
  assertStepModes,
  assertToolPairing,
  fakeEnv,
  gitOut,
  journalJson,
  journalPaths,
  lastToolResults,
  resultText,
  runCli,
  type CliResult,
} from '../helpers/cli.js';

const SECRET = 'TOP-SECRET-OUTSIDE-THE-REPOSITORY';
const TASK = 'try the walls';

describe('hostile tool calls through the agent', () => {
  let repo: TempRepo;
  let outside: string;
  let fake: FakeAnthropic;
  let run: CliResult;
  let escapeName: string;
  // The first turn's calls, each expected to be refused with an is_error result.
  let refused: Array<{ call: ScriptTool; pattern: RegExp }>;

  before(async () => {
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'savepoint-outside-')));
    writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
    repo = await createTempRepo({ files: { 'README.md': '# walls\n', 'notes.txt': 'hello\n' } });
    symlinkSync(join(outside, 'secret.txt'), join(repo.root, 'secret-link'));
    symlinkSync(outside, join(repo.root, 'escape'));
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'walls and doors');
    escapeName = `escaped-${basename(repo.root)}.txt`;
    const outsideRelative = `../${basename(outside)}/secret.txt`;
    const outsidePath = /resolves outside the repository/;
    const insideGit = /is inside \.git, which is off limits/;
    refused = [
      { call: { name: 'read_file', input: { path: outsideRelative } }, pattern: outsidePath },
      { call: { name: 'read_file', input: { path: join(outside, 'secret.txt') } }, pattern: outsidePath },
      { call: { name: 'read_file', input: { path: 'secret-link' } }, pattern: outsidePath },
      { call: { name: 'read_file', input: { path: 'escape/secret.txt' } }, pattern: outsidePath },
      { call: { name: 'read_file', input: { path: '.git/config' } }, pattern: insideGit },
      { call: { name: 'write_file', input: { path: `../${escapeName}`, content: 'out\n' } }, pattern: outsidePath },
      { call: { name: 'write_file', input: { path: 'escape/planted.txt', content: 'out\n' } }, pattern: outsidePath },
      { call: { name: 'write_file', input: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\necho owned\n' } }, pattern: insideGit },
      { call: { name: 'edit_file', input: { path: '.git/HEAD', old_string: 'main', new_string: 'evil' } }, pattern: insideGit },
      { call: { name: 'list_files', input: { path: '..' } }, pattern: outsidePath },
      { call: { name: 'search', input: { pattern: 'TOP-SECRET', path: outside } }, pattern: outsidePath },
      { call: { name: 'teleport', input: { to: 'mars' } }, pattern: /no tool named "teleport"/ },
      { call: { name: 'edit_file', input: { path: 'notes.txt', old_string: 'not in the file', new_string: 'x' } }, pattern: /old_string was not found/ },
      { call: { name: 'read_file', input: {} }, pattern: /Invalid input: "path" is required/ },
    ];
    fake = await startFakeAnthropic({
      turns: [
        { text: 'Testing the walls.', tools: refused.map((r) => r.call) },
        {
          text: 'Now some noisy commands.',
          tools: [
            { name: 'run_bash', input: { command: 'seq 1 100000' } },
            { name: 'run_bash', input: { command: 'echo failing >&2; exit 3' } },
          ],
        },
        { text: 'The walls held.' },
      ],
    });
    run = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
  });

  after(async () => {
    await fake?.close();
    await repo?.remove();
    if (outside) rmSync(outside, { recursive: true, force: true });
    rmSync(join(tmpdir(), escapeName), { force: true });
  });

  test('the run goes on past every refused call and finishes with exit 0', async () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /The walls held\./);
    // 3 model calls, 14 refused calls, 2 commands: every step live, in order.
    assert.equal(assertStepModes(run.stdout, 0).length, 19);
    assert.equal(fake.requests.length, 3);
    assertToolPairing(fake.requests);
  });

  test('each hostile call is answered with an is_error tool_result that says why', () => {
    const results = lastToolResults(fake.requests[1]!);
    assert.equal(results.length, refused.length);
    results.forEach((result, i) => {
      const { call, pattern } = refused[i]!;
      const what = `${call.name} ${JSON.stringify(call.input)}`;
      assert.equal(result.tool_use_id, `toolu_s0_${i}`, what);
      assert.equal(result.is_error, true, `${what} must be an error, got: ${resultText(result)}`);
      assert.match(resultText(result), pattern, what);
    });
  });

  test('nothing outside the repository or inside .git was read or written', async () => {
    for (const body of fake.requests) assert.ok(!JSON.stringify(body).includes(SECRET), 'the secret never reached the model');
    assert.deepEqual(readdirSync(outside), ['secret.txt']);
    assert.equal(existsSync(join(tmpdir(), escapeName)), false);
    assert.equal(existsSync(join(repo.root, '.git/hooks/pre-commit')), false);
    assert.equal(readFileSync(join(repo.root, '.git/HEAD'), 'utf8'), 'ref: refs/heads/main\n');
    assert.equal(repo.read('notes.txt'), 'hello\n');
    await assertFsckClean(repo.root);
  });

  test('a 100,000-line output reaches the model as head and tail with a cut note, and the journal keeps all of it', async () => {
    const [flood] = lastToolResults(fake.requests[2]!);
    const shown = resultText(flood!);
    assert.notEqual(flood!.is_error, true);
    assert.ok(shown.startsWith('exit 0\n1\n2\n3\n'), shown.slice(0, 40));
    assert.ok(shown.endsWith('\n99999\n100000'), shown.slice(-40));
    assert.match(shown, /\[\.\.\. [\d,]+ lines \(.+\) cut from the middle; to see them, narrow the command \(grep, head, tail\) or read a range \(offset, limit\) \.\.\.\]/);
    assert.ok(!shown.includes('\n50000\n'), 'the middle was cut');
    assert.ok(shown.split('\n').length <= 2000, `at most 2,000 lines reach the model, not ${shown.split('\n').length}`);
    assert.ok(Buffer.byteLength(shown) <= 50 * 1024, 'at most 50 KB reach the model');

    const entries = (await journalPaths(repo.root)).filter((path) => /-run_bash\.json$/.test(path)).sort();
    assert.equal(entries.length, 2, entries.join('\n'));
    const entry = await journalJson<{ result: { output: string } }>(repo.root, entries[0]!);
    const kept = entry.result.output.split('\n');
    assert.equal(kept[0], 'exit 0');
    assert.deepEqual(kept.slice(1), Array.from({ length: 100_000 }, (_, i) => String(i + 1)));
  });

  test('a failing command answers with its exit code and output', () => {
    const [, failing] = lastToolResults(fake.requests[2]!);
    assert.match(resultText(failing!), /^exit 3\nfailing$/);
  });

  test('the journal records the refusals, so the identical command replays them with no request', async () => {
    const again = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(assertStepModes(again.stdout, 19).length, 19);
    assert.equal(fake.requests.length, 3);
    assert.match(await gitOut(repo.root, ['log', '-1', '--format=%s', 'agent-journal']), /finished/);
  });
});
