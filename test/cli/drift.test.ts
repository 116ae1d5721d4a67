// Drift, end to end: a run is killed, the working tree is edited by hand, and the identical command
// is run again. Without an answer (no terminal) it stops and lists the files; `--restore` puts the
// recorded files back (keeping, and naming, a file the user made that the run never saw);
// `--keep-worktree` goes live on the edited files; on a terminal (a real pseudo-terminal, through
// util-linux `script`) the user is asked and each answer does what it says.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic } from '../helpers/fake-anthropic.js';
import { gitOut, journalFiles } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';
import {
  assertOneParagraph,
  assertStepModes,
  assistantMessages,
  baseEnv,
  BIN,
  fakeEnv,
  lastToolResults,
  resultText,
  runCli,
  startCli,
  waitUntil,
} from '../helpers/cli.js';

const scratch = useScratch();

const TASK = 'tidy the greeting';
const ORIGINAL_APP = 'export const greet = () => "hello";\n';
const AGENT_APP = 'export const greet = () => "Hello!";\n';
const HAND_APP = 'export const greet = () => "hi from a human";\n';
// Steps: #1 model, #2 write_file notes.txt, #3 model, #4 edit_file src/app.js, #5 model (killed
// here, first time), #6 read_file src/app.js, #7 model (final).
const TURNS: ScriptTurn[] = [
  { text: 'Notes first.', tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'plan: capitalise\n' } }] },
  { tools: [{ name: 'edit_file', input: { path: 'src/app.js', old_string: '"hello"', new_string: '"Hello!"' } }] },
  { tools: [{ name: 'read_file', input: { path: 'src/app.js' } }] },
  { text: 'The greeting is tidy.' },
];

interface Crashed {
  repo: TempRepo;
  fake: FakeAnthropic;
  tip: string;
}

// Runs the task until the third model call, kills it, then edits the files by hand: a tracked file
// the run changed, an untracked file the run wrote (deleted), and a new file the run never saw.
async function crashThenEditByHand(): Promise<Crashed> {
  const hold = new Set([2]);
  const fake = await scratch.fake(TURNS, hold);
  const repo = await scratch.repo({ 'src/app.js': ORIGINAL_APP, 'README.md': '# app\n' });
  const first = startCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
  await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: first });
  first.kill();
  await first.result;
  hold.clear();
  assert.equal(repo.read('src/app.js'), AGENT_APP);
  repo.write('src/app.js', HAND_APP);
  unlinkSync(join(repo.root, 'notes.txt'));
  repo.write('scratch/by-hand.txt', 'the user made this\n');
  return { repo, fake, tip: await gitOut(repo.root, ['rev-parse', 'agent-journal']) };
}

const LISTED = /modified src\/app\.js/;

function assertRestored(crashed: Crashed, stdout: string): void {
  const { repo, fake } = crashed;
  assert.equal(repo.read('src/app.js'), AGENT_APP, 'the recorded version is back');
  assert.equal(repo.read('notes.txt'), 'plan: capitalise\n', 'a file the run wrote is back');
  assert.equal(repo.read('scratch/by-hand.txt'), 'the user made this\n', "the user's own file is kept");
  assert.match(stdout, /Kept 1 untracked file\(s\) the run never recorded: scratch\/by-hand\.txt/, 'and the user is told');
  // The model's read_file (step 6, live) sees the restored file.
  const read = fake.requests.find((body) => assistantMessages(body) === 3)!;
  assert.match(resultText(lastToolResults(read)[0]!), /Hello!/);
}

function assertKept(crashed: Crashed, stdout: string): void {
  const { repo, fake } = crashed;
  assert.equal(repo.read('src/app.js'), HAND_APP, 'the hand edit is kept');
  assert.ok(!existsSync(join(repo.root, 'notes.txt')), 'the deletion is kept');
  const read = fake.requests.find((body) => assistantMessages(body) === 3)!;
  assert.match(resultText(lastToolResults(read)[0]!), /hi from a human/, 'the live steps work on the edited files');
  assert.match(stdout, /#5 +LIVE/);
}

describe('drift between a crash and the resume', { concurrency: true }, () => {
  // One crash for both: the refusal changes nothing (files, journal), so --restore then starts from
  // the very state a crash leaves.
  test('with no terminal and no answer, the run stops, lists the files, and changes nothing; --restore then puts the recorded files back, keeps and names the file the run never saw, and goes on', async () => {
    const crashed = await crashThenEditByHand();
    const { repo, fake, tip } = crashed;
    const requests = fake.requests.length;
    const result = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(result.code, 1, result.stdout);
    const message = assertOneParagraph(result.stderr);
    assert.match(message, /The working tree differs from what run \S+ recorded after step 4/);
    assert.match(message, LISTED);
    assert.match(message, /deleted notes\.txt/);
    assert.match(message, /added scratch\/by-hand\.txt/);
    assert.match(message, /--restore/);
    assert.match(message, /--keep-worktree/);
    assert.equal(fake.requests.length, requests, 'no model call');
    assert.equal(repo.read('src/app.js'), HAND_APP, 'no file is touched');
    assert.ok(!existsSync(join(repo.root, 'notes.txt')));
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal']), tip, 'nothing is written to the journal');

    const restored = await runCli(['run', '--yes', '--restore', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /--restore: restored the working tree as the journal recorded it after step 4 \(2 written, 0 deleted\)/);
    assertStepModes(restored.stdout, 4);
    assert.deepEqual(fake.requests.slice(requests).map(assistantMessages), [2, 3]);
    assertRestored(crashed, restored.stdout);
  });

  test('--keep-worktree goes live on the files as they are, and says so', async () => {
    const crashed = await crashThenEditByHand();
    const result = await runCli(['run', '--yes', '--keep-worktree', TASK], { cwd: crashed.repo.root, env: fakeEnv(crashed.fake) });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /--keep-worktree: going on with files that differ from the journal \(.*modified src\/app\.js.*\)/);
    assertStepModes(result.stdout, 4);
    assertKept(crashed, result.stdout);
    assert.equal(crashed.repo.read('scratch/by-hand.txt'), 'the user made this\n');
  });

  test('--restore and --keep-worktree together are bad usage', async () => {
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const result = await runCli(['run', '--yes', '--restore', '--keep-worktree', TASK], { cwd: repo.root, env: { ANTHROPIC_API_KEY: 'x' } });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Choose one of --restore and --keep-worktree/);
  });
});

// ── On a terminal ───────────────────────────────────────────────────────────────────────────────

const HAVE_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

// Runs `savepoint <args>` on a pseudo-terminal (util-linux `script`), types `early` at once, answers
// the drift question with `answer` once it is asked, and returns everything the terminal showed.
async function onTerminal(args: string[], cwd: string, env: Record<string, string>, answer: string, early = ''): Promise<{ code: number | null; screen: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env: { ...baseEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  if (early) child.stdin.write(early);
  // A safety net, as startCli's: wide enough for a loaded 2-core machine.
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  try {
    let done = false;
    void exited.then(() => (done = true));
    await waitUntil(() => done || /Restore the files as the run recorded them\? \[y\]es, restore \/ \[k\]eep them as they are \/ \[q\]uit:/.test(screen), 'the drift question on the terminal');
    assert.ok(!done, `savepoint ended before asking:\n${screen}`);
    child.stdin.write(`${answer}\r`);
    const code = await exited;
    return { code, screen };
  } finally {
    clearTimeout(timer);
    child.stdin.end();
  }
}

describe('drift on a terminal: the user is asked', { concurrency: true, skip: HAVE_SCRIPT ? false : 'util-linux "script" is not installed (no pseudo-terminal)' }, () => {
  // "q" changes nothing (files, journal), so the same crash then serves "y".
  test('"q" stops with the list of files, nothing changed; asked again, the question lists the files and "y" restores and the run goes on', async () => {
    const crashed = await crashThenEditByHand();
    const requests = crashed.fake.requests.length;
    const quit = await onTerminal(['run', '--yes', TASK], crashed.repo.root, fakeEnv(crashed.fake) as Record<string, string>, 'q');
    assert.equal(quit.code, 1, quit.screen);
    assert.match(quit.screen, /savepoint: The working tree differs from what run \S+ recorded after step 4/);
    assert.equal(crashed.repo.read('src/app.js'), HAND_APP);
    assert.equal(crashed.fake.requests.length, requests);
    assert.equal(await gitOut(crashed.repo.root, ['rev-parse', 'agent-journal']), crashed.tip);

    const { code, screen } = await onTerminal(['run', '--yes', TASK], crashed.repo.root, fakeEnv(crashed.fake) as Record<string, string>, 'y');
    assert.equal(code, 0, screen);
    assert.match(screen, /The working tree differs from what the run recorded after step 4: .*modified src\/app\.js/);
    assert.match(screen, /You chose restore: restored the working tree/);
    assertStepModes(screen.replace(/\r/g, ''), 4);
    assertRestored(crashed, screen.replace(/\r/g, ''));
  });

  // "k" answered after the question keeps the files; a "y" typed before it is no answer. (A lone
  // "k" case would check a subset of this one.)
  test('"k" keeps the files as they are and the run goes on; a "y" typed before the question appears does not restore: only the answer typed after it counts', async () => {
    const crashed = await crashThenEditByHand();
    // Typed at once, before the command has even started: it waits on the terminal for whoever reads next.
    const { code, screen } = await onTerminal(['run', '--yes', TASK], crashed.repo.root, fakeEnv(crashed.fake) as Record<string, string>, 'k', 'y\r');
    assert.equal(code, 0, screen);
    assertKept(crashed, screen.replace(/\r/g, ''));
  });
});

describe('no question when there is nothing to decide', { concurrency: true }, () => {
  test('an untouched working tree resumes without a word about drift', async () => {
    const hold = new Set([2]);
    const fake = await scratch.fake(TURNS, hold);
    const repo = await scratch.repo({ 'src/app.js': ORIGINAL_APP });
    const first = startCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: first });
    first.kill();
    await first.result;
    hold.clear();
    const result = await runCli(['run', '--yes', TASK], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /restored|differs|--keep-worktree/);
    assert.ok((await journalFiles(repo.root)).some((p) => p.endsWith('/worktree/notes.txt')));
  });
});
