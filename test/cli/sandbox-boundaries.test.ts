// The sandbox made visible, through the real CLI in a real bubblewrap sandbox with the tests' model
// server: the run's header says how commands run; `git commit` in the repository (a read-only .git)
// and a name that cannot resolve (git, node's fetch: no network) come back with a note, for the model
// in the tool result and for the person on the step line; the note is part of the recorded result, so
// a resume hands the model the same words and a replay shows the same line. Unconfined, or with the
// boundary lifted, the same words in a command's output get no note. Skipped where bwrap cannot start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { fakeEnv, lastToolResults, resultText, runCli, stepLines } from '../helpers/cli.js';

const scratch = useScratch();


const HEADER = 'commands run in a sandbox: no network; writable: the working tree (not .git) and a private /tmp, not the files that decide what runs; no secret-named variables (--no-sandbox to lift)';
const GIT_NOTE = "note: this command ran in savepoint's sandbox, where the repository's .git is read-only";
const NET_NOTE = "note: this command ran in savepoint's sandbox, which has no network";
// node's fetch, as a command: prints the code of the failure underneath (ENOTFOUND or EAI_AGAIN).
const FETCH = `"${process.execPath}" -e "fetch('https://example.invalid/').then(() => console.log('fetched'), (e) => { console.error('fetch failed: ' + (e.cause && e.cause.code)); process.exit(1); })"`;
// What a command could print unconfined: the words of both boundaries, with no boundary behind them.
const LOOKALIKE = `echo "fatal: Unable to create '$PWD/.git/index.lock': Read-only file system"; echo "curl: (6) Could not resolve host: example.invalid"; exit 1`;

// The output with the header's wrapped lines (indented by two spaces, as the header's notes are) joined.
const unwrapped = (stdout: string) => stdout.replace(/(\n  [^ #][^\n]*)\n  (?=[^ #])/g, '$1 ');

// One run_bash call per turn, then a final answer.
const turnsFor = (commands: string[]): ScriptTurn[] => [...commands.map((command) => ({ tools: [{ name: 'run_bash', input: { command } }] })), { text: 'Done.' }];

describe('the sandbox, made visible', { skip: noSandboxReason(), concurrency: true }, () => {
  test('the header says how commands run; git commit and an unresolvable name get their notes, for the model and on the step line; a resume hands back the same result', async () => {
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const commands = ['git commit --allow-empty -m "try"', 'git ls-remote https://example.invalid/repo.git', FETCH, 'echo fine'];
    const fake = await scratch.fake(turnsFor(commands));
    const args = ['run', '--yes', 'commit and fetch'];
    // Stopped after the third command's step, so the resume's first live request carries the recorded results.
    const first = await runCli([...args.slice(0, 2), '--max-steps', '6', ...args.slice(2)], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 3, first.stdout + first.stderr);
    assert.ok(unwrapped(first.stdout).includes(`\n  ${HEADER}\n`), `the header says how commands run:\n${first.stdout}`);

    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const results = fake.requests.slice(1).map((body) => resultText(lastToolResults(body)[0]!));
    assert.equal(results.length, 4);
    assert.match(results[0]!, /Read-only file system/);
    assert.ok(results[0]!.endsWith('--allow-git-writes.'), results[0]);
    assert.ok(results[0]!.includes(GIT_NOTE), results[0]);
    for (const result of [results[1]!, results[2]!]) {
      assert.match(result, /Could not resolve host|ENOTFOUND|EAI_AGAIN/);
      assert.ok(result.includes(NET_NOTE) && result.endsWith('--allow-network.'), result);
    }
    assert.match(results[2]!, /fetch failed: (ENOTFOUND|EAI_AGAIN)/);
    assert.equal(results[3], 'exit 0\nfine', 'a command that hit no boundary gets no note');

    // The resume's first live request (the fourth command's answer) holds the first attempt's results as recorded.
    const live = fake.requests.at(-2)!;
    const sent = live.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: { type: string }) => b.type === 'tool_result');
    assert.deepEqual(sent.slice(0, 3).map((b) => resultText(b as Parameters<typeof resultText>[0])), results.slice(0, 3));

    // The person reads it on the step line, live and replayed.
    const lineOf = (out: string, position: number) => stepLines(out).find((l) => l.position === position)!.text;
    assert.match(lineOf(first.stdout, 2), /\(sandbox: \.git read-only\)/);
    assert.match(lineOf(first.stdout, 4), /\(sandbox: no network\)/);
    assert.match(lineOf(again.stdout, 2), /\(sandbox: \.git read-only\)/);
    assert.match(lineOf(again.stdout, 6), /\(sandbox: no network\)/);
    assert.doesNotMatch(lineOf(again.stdout, 8), /sandbox/);

    // --json carries it on each step.
    const json = await runCli([...args.slice(0, 2), '--json', ...args.slice(2)], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(json.code, 0, json.stderr);
    const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; position?: number; note?: string | null });
    const notes = events.filter((e) => e.type === 'step-replayed' && [2, 4, 6, 8].includes(e.position!)).map((e) => e.note);
    assert.deepEqual(notes, ['sandbox: .git read-only', 'sandbox: no network', 'sandbox: no network', null]);
  });

  test('unconfined, or with the boundaries lifted, the header says so and the same words get no note', async () => {
    for (const [flags, header] of [
      [['--no-sandbox'], 'commands run unconfined (--no-sandbox)'],
      [['--allow-network', '--allow-git-writes'], 'commands run in a sandbox: network allowed; writable: the working tree (.git too) and a private /tmp, not the files that decide what runs; no secret-named variables (--no-sandbox to lift)'],
    ] as const) {
      const repo = await scratch.repo({ 'README.md': '# app\n' });
      const fake = await scratch.fake(turnsFor([LOOKALIKE]));
      const run = await runCli(['run', '--yes', ...flags, 'look alike'], { cwd: repo.root, env: fakeEnv(fake) });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.ok(unwrapped(run.stdout).includes(`\n  ${header}\n`), `${flags.join(' ')}: the header says so:\n${run.stdout}`);
      const result = resultText(lastToolResults(fake.requests[1]!)[0]!);
      assert.match(result, /Read-only file system\ncurl: \(6\) Could not resolve host: example\.invalid$/, `${flags.join(' ')}: no note is guessed:\n${result}`);
      assert.doesNotMatch(stepLines(run.stdout).find((l) => l.position === 2)!.text, /sandbox/);
    }
  });
});
