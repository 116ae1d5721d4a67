// The truth at the moment a person (or a cron job) acts on a finished run, through the real CLI:
// the identical command on a repository that moved on since (a new commit, other files) starts a
// new run of the task, with lineage to the old one, and an unmoved one replays; a replay asked for
// by id over changed files says so (the files, when it finished, how to start anew), with the list
// in --json's final event; a command refused before anything runs
// (no credentials, a held lock, bad usage) leaves run.json byte for byte as it was; and a later
// success clears an earlier attempt's error from the run's status while that attempt keeps it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { turnIndex } from '../../src/model/script-turn.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, fakeEnv, gitOut, journalJson, runCli, runIds, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

const BROKEN = 'export const add = (a, b) => a - b;\n';
const FIXED = 'export const add = (a, b) => a + b;\n';
const FIX_TURNS: ScriptTurn[] = [
  { text: 'Fixing the sign.', tools: [{ name: 'edit_file', input: { path: 'src/add.js', old_string: 'a - b', new_string: 'a + b' } }] },
  { text: 'Fixed: add now adds, the test passes.' },
];

// A repository with a broken add.js and a scripted model (in .git, outside the working tree) that fixes it.
async function fixedRepo() {
  const repo = await scratch.repo({ 'src/add.js': BROKEN, 'README.md': '# add\n' });
  const script = join(repo.root, '.git', 'fix.json');
  writeFileSync(script, JSON.stringify({ turns: FIX_TURNS }));
  const args = ['run', '--yes', '--model', `script:${script}`, 'fix add'];
  const first = await runCli(args, { cwd: repo.root });
  assert.equal(first.code, 0, first.stdout + first.stderr);
  assert.equal(repo.read('src/add.js'), FIXED);
  return { repo, args };
}

interface JsonLine {
  type: string;
  [field: string]: unknown;
}
const jsonLines = (stdout: string): JsonLine[] => stdout.trim().split('\n').map((line) => JSON.parse(line) as JsonLine);

// The same command with the run's own id: a replay of that very run, asked for by name.
async function byId(repo: { root: string }, args: string[]): Promise<string[]> {
  const [run] = await runIds(repo.root);
  return [...args.slice(0, -1), '--run', run!, args.at(-1)!];
}

// (The identical command without --run over changed files starts a new run: see below. These
// tests once ran it and saw the old answer replayed, which a script took as today's success.)
describe('a finished run replayed by id over changed files', () => {
  // One finished run, replayed four times as its files change: the fix undone, then put back as the
  // run left it (text, then --json), then undone again with a file of the person's own added (--json).
  test('files put back replay with no notice; over changed files the replay names them, says when the run finished and how to start a new run, and --json\'s final event carries the list (empty when nothing changed)', async () => {
    const { repo, args } = await fixedRepo();

    repo.write('src/add.js', BROKEN); // the fix was undone
    const again = await runCli(await byId(repo, args), { cwd: repo.root });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const notice = again.stdout.indexOf("The working tree differs from this run's last checkpoint: modified src/add.js.");
    assert.ok(notice >= 0, `the notice names the file:\n${again.stdout}`);
    assert.ok(notice < again.stdout.indexOf('Final answer'), 'it comes before the replayed answer');
    assert.match(again.stdout, /The run finished (just now|\d+ s ago) \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\./);
    assert.match(again.stdout.replace(/\s+/g, ' '), /"savepoint run" with its task and no --run starts a new run on the files as they are/);
    // Under the answer too, where a log's reader ends up.
    assert.match(again.stdout.slice(again.stdout.indexOf('Final answer')).replace(/\s+/g, ' '), /the files have changed since this run finished \(modified src\/add\.js\); "savepoint run" with its task and no --run starts a new run on them/);
    assert.equal(repo.read('src/add.js'), BROKEN, 'a replay changes no file');
    // A scripted model calls no API: it costs nothing, live or replayed.
    assert.match(again.stdout, /\(scripted model: no cost\)/);
    assert.doesNotMatch(again.stdout, /estimated/);

    repo.write('src/add.js', FIXED); // put back as the run left it
    const putBack = await runCli(args, { cwd: repo.root });
    assert.equal(putBack.code, 0, putBack.stderr);
    assert.doesNotMatch(putBack.stdout, /differs from this run's last checkpoint|--fresh/);

    const same = await runCli([...args.slice(0, 1), '--json', ...args.slice(1)], { cwd: repo.root });
    assert.equal(same.code, 0, same.stderr);
    const unchanged = jsonLines(same.stdout);
    assert.deepEqual(unchanged.find((l) => l.type === 'final')!.changedSince, []);
    assert.ok(!unchanged.some((l) => l.type === 'finished-over-changes'));
    assert.doesNotMatch(same.stderr, /differs from this run's last checkpoint/);

    repo.write('src/add.js', BROKEN);
    repo.write('notes.txt', 'a file of my own\n');
    const changed = await runCli(['run', '--json', ...(await byId(repo, args)).slice(1)], { cwd: repo.root });
    assert.equal(changed.code, 0, changed.stderr);
    const lines = jsonLines(changed.stdout);
    const expected = [
      { path: 'notes.txt', change: 'added' },
      { path: 'src/add.js', change: 'modified' },
    ];
    assert.deepEqual(lines.find((l) => l.type === 'final')!.changedSince, expected);
    const early = lines.find((l) => l.type === 'finished-over-changes')!;
    assert.deepEqual(early.changes, expected);
    assert.equal(typeof early.finishedAt, 'string');
  });
});

const READ_TURNS: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'The README is one line.' },
  { text: 'Done with the follow-up.' },
];

const runJson = (root: string, run: string) => gitOut(root, ['show', `agent-journal:runs/${run}/run.json`]);

describe('a command refused before anything runs', { concurrency: true }, () => {
  test('continue with no credentials leaves the finished run as it was, and the identical run still replays with no key', async () => {
    const repo = await scratch.repo({ 'README.md': '# readme\n' });
    const fake = await scratch.fake(READ_TURNS);
    const first = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    const [run] = await runIds(repo.root);
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    const before = await runJson(repo.root, run!);

    const refused = await runCli(['continue', '--yes', 'now add a test'], { cwd: repo.root, env: { ANTHROPIC_BASE_URL: fake.url } });
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(assertOneParagraph(refused.stderr), /ANTHROPIC_API_KEY/);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'no commit for a refusal');
    assert.equal(await runJson(repo.root, run!), before, 'run.json is exactly as it was');

    const runs = await runCli(['runs', '--json'], { cwd: repo.root });
    assert.equal((JSON.parse(runs.stdout) as { runs: Array<{ status: string }> }).runs[0]!.status, 'finished');
    const replay = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: { ANTHROPIC_BASE_URL: fake.url } });
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /Final answer\nThe README is one line\./);
  });

  test('a command refused by a held lock or by bad usage adds no commit', async () => {
    const repo = await scratch.repo({ 'README.md': '# readme\n' });
    const hold = new Set([1]);
    const fake = await scratch.fake(READ_TURNS, hold);
    const live = startCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 2, 'the second model call', { child: live });
    const tip = await gitOut(repo.root, ['rev-parse', 'agent-journal']);
    const [run] = await runIds(repo.root);
    const before = await runJson(repo.root, run!);

    const locked = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(locked.code, 1, locked.stdout + locked.stderr);
    assertOneParagraph(locked.stderr);
    const usage = await runCli(['continue', '--max-steps', 'many', 'go on'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(usage.code, 2, usage.stdout + usage.stderr);
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'no commit for either refusal');
    assert.equal(await runJson(repo.root, run!), before);
    live.kill();
    await live.result;
  });
});

describe('an earlier attempt that failed', () => {
  test("a later success clears the error from the run's status, and the failed attempt keeps it", async () => {
    const repo = await scratch.repo({ 'README.md': '# readme\n' });
    // The second model call fails once (after the first attempt has recorded its first steps).
    let armed = false;
    const fake = await scratch.fake((body) => {
      const index = turnIndex(body.messages);
      if (index === 0 && !armed) {
        armed = true;
        fake.failNext(400, 1, { type: 'invalid_request_error', message: 'the request was refused for this test' });
      }
      return READ_TURNS[index]!;
    });
    const failed = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    const [run] = await runIds(repo.root);
    const afterFailure = await journalJson<{ status: string; error?: string }>(repo.root, `runs/${run}/run.json`);
    assert.equal(afterFailure.status, 'failed');
    assert.match(afterFailure.error ?? '', /refused for this test/);

    const ok = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const record = await journalJson<{ status: string; error?: string; attempts: Array<{ end?: { how: string; error?: string } }> }>(repo.root, `runs/${run}/run.json`);
    assert.equal(record.status, 'finished');
    assert.equal(record.error, undefined, 'the run no longer carries the old error');
    assert.equal(record.attempts.at(-1)!.end!.how, 'finished');

    const log = await runCli(['log', run!], { cwd: repo.root });
    assert.equal(log.code, 0, log.stderr);
    assert.doesNotMatch(log.stdout, /^Error/m, 'no "Error" under the final answer');
    const json = JSON.parse((await runCli(['log', '--json', run!], { cwd: repo.root })).stdout) as { error: string | null; attempts: Array<{ ended: { how: string; error: string | null } }> };
    assert.equal(json.error, null);
    assert.deepEqual(json.attempts.map((a) => a.ended.how), ['failed', 'finished']);
    assert.match(json.attempts[0]!.ended.error ?? '', /refused for this test/);
    assert.match(log.stdout, /attempt 1 · live from #1 · failed: .*refused for this test/);
  });
});

// ── The identical command on a repository that moved on ─────────────────────────────────────────

const TEST_JS = "import { add } from './src/add.js';\nif (add(2, 2) !== 4) throw new Error('add is broken');\n";
const TASK = 'fix the add function so the test passes';

// A repository whose add.js is broken, and a fake model that fixes whatever sign is there: its
// answers come in order (each run's first call edits, its second answers).
async function fixOnFake(bug = 'a - b') {
  const repo = await scratch.repo({ 'src/add.js': BROKEN, 'test.js': TEST_JS });
  let bugNow = bug;
  const fake = await scratch.fake((body) =>
    body.messages.length === 1
      ? { text: 'Fixing.', tools: [{ name: 'edit_file', input: { path: 'src/add.js', old_string: bugNow, new_string: 'a + b' } }] }
      : { text: `Fixed ${bugNow}: the test passes.` },
  );
  const run = () => runCli(['run', '--yes', '--no-sandbox', TASK], { cwd: repo.root, env: fakeEnv(fake) });
  const first = await run();
  assert.equal(first.code, 0, first.stdout + first.stderr);
  return { repo, fake, run, setBug: (next: string) => (bugNow = next) };
}

describe('a finished run whose repository moved on', { concurrency: true }, () => {
  test('unmoved, the identical command replays the finished run; after a commit and a new bug it starts a new run for the task, saying so in one line, with lineage to the old one; --run replays the old one', async () => {
    const { repo, fake, run, setBug } = await fixOnFake();
    const [old] = await runIds(repo.root);
    // HEAD and files as the run left them: a replay, no model call.
    const unmoved = await run();
    assert.equal(unmoved.code, 0, unmoved.stdout + unmoved.stderr);
    assert.match(unmoved.stdout, /finished before: replaying its 3 steps from the journal/);
    assert.doesNotMatch(unmoved.stdout, /moved on/);
    assert.equal(fake.requests.length, 2);
    assert.equal((await runIds(repo.root)).length, 1);

    assert.equal((await gitOut(repo.root, ['commit', '-qam', 'the fix'])), '');
    repo.write('src/add.js', 'export const add = (a, b) => a * b;\n'); // a new bug
    await gitOut(repo.root, ['commit', '-qam', 'a new bug']);
    setBug('a * b');
    const sent = fake.requests.length;

    const again = await run();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const said = again.stdout.split('\n').filter((line) => line.includes('moved on'));
    assert.equal(said.length, 1, `one line:\n${again.stdout}`);
    assert.match(said[0]!, new RegExp(`^  Run ${old} finished this task before the repository moved on \\(a new commit, modified src/add\\.js\\): starting run ${old}-2 for it \\(--run ${old} replays the old one\\)\\.$`));
    assert.equal(fake.requests.length, sent + 2, 'the model is asked: this is new work');
    assert.equal(repo.read('src/add.js'), FIXED, 'and the new bug is fixed');
    assert.match(again.stdout, /Final answer\nFixed a \* b/);

    const ids = await runIds(repo.root);
    assert.equal(ids.length, 2);
    const renewed = ids.find((id) => id !== old)!;
    assert.equal(renewed, `${old}-2`);
    const record = await journalJson<{ task: string; lineage: unknown }>(repo.root, `runs/${renewed}/run.json`);
    assert.equal(record.task, TASK);
    assert.deepEqual(record.lineage, { previousRun: old });

    // The old run stays readable, and --run replays it with no model call.
    const replayed = await runCli(['run', '--yes', '--no-sandbox', '--run', old!, TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(replayed.code, 0, replayed.stdout + replayed.stderr);
    assert.match(replayed.stdout, /Final answer\nFixed a - b/);
    assert.equal(fake.requests.length, sent + 2, 'a replay asks nothing');
    // The new run, finished on the repository as it is: the identical command replays it.
    const third = await run();
    assert.equal(third.code, 0, third.stdout + third.stderr);
    assert.match(third.stdout, /Final answer\nFixed a \* b/);
    assert.doesNotMatch(third.stdout, /moved on/);
    assert.equal(fake.requests.length, sent + 2);
  });

  test('files changed by hand since it finished (no commit) also make the identical command a new run', async () => {
    const { repo, fake, run, setBug } = await fixOnFake();
    repo.write('src/add.js', 'export const add = (a, b) => a / b;\n');
    setBug('a / b');
    const again = await run();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /finished this task before the repository moved on \(modified src\/add\.js\): starting run \S+-2 for it/);
    assert.equal(repo.read('src/add.js'), FIXED);
    assert.equal(fake.requests.length, 4);
  });

  test('the person committing the run\'s own fix is a new commit: the identical command is a new run, and the model is asked again; --json says it in a new-run-for-task event before the new run\'s run-started', async () => {
    const { repo, fake, run } = await fixOnFake();
    const [old] = await runIds(repo.root);
    await gitOut(repo.root, ['commit', '-qam', 'the fix']);
    const again = await run();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /finished this task before the repository moved on \(a new commit\): starting run \S+-2 for it/);
    assert.equal(fake.requests.length, 4, 'the new run asks the model (its two calls)');

    // Another commit moves the repository on from that run in turn: said in --json this time.
    await gitOut(repo.root, ['commit', '-q', '--allow-empty', '-m', 'another commit']);
    const json = await runCli(['run', '--json', '--yes', '--no-sandbox', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(json.code, 0, json.stdout + json.stderr);
    const lines = jsonLines(json.stdout);
    assert.deepEqual(lines.slice(0, 2).map((l) => l.type), ['new-run-for-task', 'run-started']);
    const said = lines[0]!;
    assert.equal(said.previous, `${old}-2`);
    assert.equal(said.run, `${old}-3`);
    assert.deepEqual(said.changes, []);
    assert.equal((said.commit as { to: string }).to, await gitOut(repo.root, ['rev-parse', 'HEAD']));
    assert.equal(lines[1]!.run, `${old}-3`);
  });
});
