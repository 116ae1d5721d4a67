// The person's own edits between two messages survive, through the real CLI: in a session (tmux)
// and with `continue` they are kept without a question, the model is told which files changed in
// its next request (a journaled part of the user step, so replay sends the same), and the kept tree
// is the run's new checkpoint (nothing is said about it again). A restore (--restore, or "y" on a
// terminal) writes only files the run wrote: a file the run never touched keeps the person's line,
// and the person's version of a file the run did write is saved under refs/savepoint/saved/ first,
// named with the command that gets it back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, git, gitOut, journalJson, journalPaths, runCli, runIds, startCli, waitUntil } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';
import { onPty, plain, SKIP_NO_PTY, startOnPty } from '../helpers/pty.js';

const scratch = useScratch();

const BROKEN = 'export const add = (a, b) => a - b;\n';
const FIXED = 'export const add = (a, b) => a + b;\n';
const TEST_JS = "import { add } from './src/add.js';\nif (add(2, 2) !== 4) throw new Error('add is broken');\n";
const MY_LINE = "if (add(1, 1) !== 2) throw new Error('one and one');\n";
const FILES = { 'src/add.js': BROKEN, 'test.js': TEST_JS };
const FIX: ScriptTurn = { text: 'Fixing the sign.', tools: [{ name: 'edit_file', input: { path: 'src/add.js', old_string: 'a - b', new_string: 'a + b' } }] };
const NOTE = /the person changed these files by hand: modified test\.js/;

// What the model was sent last in `body`: the last user message's text.
const lastUserText = (body: { messages: Array<{ role: string; content: unknown }> }) => JSON.stringify(body.messages.at(-1)?.content ?? '');

// A live answer on the session's screen, then the prompt.
const answeredThenPrompt = (text: string) => new RegExp(`→ answers "${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[\\s\\S]*^›\\s*$`, 'm');

describe('hand edits between messages', { concurrency: true }, () => {
  test('in a session, a line added to test.js is kept with no question, the model is told in its next request, and the next message says nothing more', async () => {
    const repo = await scratch.repo(FILES);
    const fake = await scratch.fake([FIX, { text: 'Fixed add.' }, { text: 'I see your new check.' }, { text: 'Third answer.' }]);
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('fix the add function so the test passes');
    await term.waitFor(answeredThenPrompt('Fixed add.'));
    assert.equal(repo.read('src/add.js'), FIXED);

    appendFileSync(join(repo.root, 'test.js'), MY_LINE);
    term.type('look at my new check');
    await term.waitFor(answeredThenPrompt('I see your new check.'));
    term.type('and once more');
    await term.waitFor(answeredThenPrompt('Third answer.'));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    const screen = term.screen();
    assertNoStack(screen);

    assert.doesNotMatch(screen, /Restore the files as the run recorded them/, 'no drift question');
    assert.equal(repo.read('test.js'), TEST_JS + MY_LINE, "the person's line is still there");
    assert.equal((screen.match(/Going on with the files you changed \(modified test\.js\)/g) ?? []).length, 1, 'said once, at the message after the edit');
    assert.equal(fake.requests.length, 4);
    assert.match(lastUserText(fake.requests[2]!), NOTE, 'the request after the edit tells the model');
    assert.match(lastUserText(fake.requests[2]!), /look at my new check/);
    assert.doesNotMatch(lastUserText(fake.requests[3]!), /changed these files by hand/, 'the next one does not tell it again');

    // The user step records the files and the kept tree as the run's checkpoint.
    const [run] = await runIds(repo.root);
    const userSteps = (await journalPaths(repo.root)).filter((p) => p.endsWith('-user.json')).sort();
    assert.equal(userSteps.length, 2);
    const told = await journalJson<{ input: { changedFiles?: unknown }; checkpoint?: string }>(repo.root, userSteps[0]!);
    assert.deepEqual(told.input.changedFiles, [{ path: 'test.js', change: 'modified' }]);
    assert.equal(await gitOut(repo.root, ['show', `${told.checkpoint}:test.js`]), (TEST_JS + MY_LINE).trimEnd());
    assert.equal(await gitOut(repo.root, ['rev-parse', `agent-journal:runs/${run}/worktree`]), told.checkpoint, 'no later step changed files: the kept tree is the last checkpoint');

    // The identical session replays what was sent: the whole run again asks nothing.
    const sent = fake.requests.length;
    const replay = await runCli(['resume', run!], { cwd: repo.root, env });
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /Final answer\nThird answer\./);
    assert.equal(fake.requests.length, sent, 'replay sends nothing: the user step replays with its files');
  });

  test('continue after a hand edit (and a new .savepoint/settings.json) goes on, tells the model, and the next continue has nothing to tell', async () => {
    const repo = await scratch.repo(FILES);
    const fake = await scratch.fake([FIX, { text: 'Fixed add.' }, { text: 'Noted your check.' }, { text: 'Nothing new.' }]);
    const env = fakeEnv(fake);
    const first = await runCli(['run', '--yes', '--no-sandbox', 'fix the add function so the test passes'], { cwd: repo.root, env });
    assert.equal(first.code, 0, first.stdout + first.stderr);

    appendFileSync(join(repo.root, 'test.js'), MY_LINE);
    mkdirSync(join(repo.root, '.savepoint'), { recursive: true });
    writeFileSync(join(repo.root, '.savepoint', 'settings.json'), '{}\n');
    const next = await runCli(['continue', '--yes', '--no-sandbox', 'look at my new check'], { cwd: repo.root, env });
    assert.equal(next.code, 0, next.stdout + next.stderr);
    assert.match(next.stdout, /Going on with the files you changed \(added \.savepoint\/settings\.json, modified test\.js\)/);
    assert.match(lastUserText(fake.requests[2]!), /the person changed these files by hand: added \.savepoint\/settings\.json, modified test\.js/);
    assert.equal(repo.read('test.js'), TEST_JS + MY_LINE);

    const again = await runCli(['continue', '--yes', '--no-sandbox', 'anything else'], { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.doesNotMatch(again.stdout, /Going on with the files you changed|differs/);
    assert.doesNotMatch(lastUserText(fake.requests[3]!), /changed these files by hand/);
  });
});

// Runs the fix until its second model call and kills it there (the edit of src/add.js is recorded),
// then edits by hand: a line added to test.js (the run never touched it) and src/add.js changed again.
async function killedThenEdited(keepHolding = false) {
  const hold = new Set([1]);
  const fake = await scratch.fake([FIX, { text: 'Fixed add.' }], hold);
  const repo = await scratch.repo(FILES);
  const task = 'fix the add function so the test passes';
  const first = startCli(['run', '--yes', '--no-sandbox', task], { cwd: repo.root, env: fakeEnv(fake) });
  await waitUntil(() => fake.requests.length >= 2, 'the second model call', { child: first });
  first.kill();
  await first.result;
  if (!keepHolding) hold.clear();
  assert.equal(repo.read('src/add.js'), FIXED);
  appendFileSync(join(repo.root, 'test.js'), MY_LINE);
  const mine = 'export const add = (a, b) => b + a; // mine\n';
  repo.write('src/add.js', mine);
  return { repo, fake, task, mine, hold };
}

// After a restore: the run's file is back, the person's file untouched, the person's version of the
// run's file is in the named ref, and the command named gets it back.
async function assertRestoredOnlyTheRunsFile(root: string, screen: string, mine: string, read: (path: string) => string): Promise<void> {
  const out = screen.replace(/\s+/g, ' '); // long lines are wrapped to the terminal's width
  assert.equal(read('src/add.js'), FIXED, 'the file the run wrote is restored');
  assert.equal(read('test.js'), TEST_JS + MY_LINE, 'a file the run never wrote is never overwritten');
  const saved = /saved in (refs\/savepoint\/saved\/\S+) \(src\/add\.js\): get them back with "(git checkout \S+ -- :\/)"/.exec(out);
  assert.ok(saved, `the message names the ref and the command:\n${out}`);
  assert.match(out, /Left 1 file\(s\) the run never wrote as you have them: test\.js/);
  assert.equal(await gitOut(root, ['ls-tree', '-r', '--name-only', saved[1]!]), 'src/add.js', 'the ref holds what was overwritten, nothing else');
  assert.equal(await gitOut(root, ['show', `${saved[1]}:src/add.js`]), mine.trimEnd());
  const back = await git(root, saved[2]!.split(' ').slice(1));
  assert.equal(back.code, 0, back.stderr);
  assert.equal(read('src/add.js'), mine, 'the named command gets the person\'s version back');
}

describe('a restore over the person\'s files', { concurrency: true }, () => {
  test('--restore writes only the file the run wrote, saves the person\'s version of it first, and tells the model of the file it left', async () => {
    const { repo, fake, task, mine } = await killedThenEdited();
    const result = await runCli(['run', '--yes', '--no-sandbox', '--restore', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(lastUserText(fake.requests.at(-1)!), NOTE, 'the file left as the person has it is told');
    await assertRestoredOnlyTheRunsFile(repo.root, result.stdout, mine, (path) => repo.read(path));
  });

  test('"y" on a terminal does the same', { skip: SKIP_NO_PTY }, async () => {
    const { repo, fake, task, mine } = await killedThenEdited();
    const question = /\[y\]es, restore \/ \[k\]eep them as they are \/ \[q\]uit:/;
    const { code, out } = await onPty(['run', '--yes', '--no-sandbox', task], repo.root, [{ after: question, send: 'y\r' }], { env: fakeEnv(fake) as Record<string, string> });
    assert.equal(code, 0, plain(out));
    assert.match(plain(out), /You chose restore/);
    await assertRestoredOnlyTheRunsFile(repo.root, plain(out), mine, (path) => repo.read(path));
  });

  test('"k" on a terminal sticks: the kept tree is the checkpoint, so the next run asks nothing', { skip: SKIP_NO_PTY }, async () => {
    const { repo, fake, task, mine, hold } = await killedThenEdited(true);
    const question = /\[y\]es, restore \/ \[k\]eep them as they are \/ \[q\]uit:/;
    // "k", then Ctrl-C while the model is asked (held): the kept files are recorded by then.
    const term = startOnPty(['run', '--yes', '--no-sandbox', task], repo.root, [{ after: question, send: 'k\r' }], { env: fakeEnv(fake) as Record<string, string> });
    await waitUntil(() => fake.requests.length >= 3, 'the model asked after the answer');
    term.type('\x03');
    const stopped = await term.result;
    assert.equal(stopped.code, 130, plain(stopped.out));
    assert.equal(repo.read('src/add.js'), mine);
    assert.match(lastUserText(fake.requests[2]!), /the person changed these files by hand: modified src\/add\.js, modified test\.js/);

    hold.clear();
    // No terminal, no flag: a difference would stop it (EDRIFT). There is none: the answer stuck.
    const again = await runCli(['run', '--yes', '--no-sandbox', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.doesNotMatch(again.stdout + again.stderr, /differs|Going on with/);
    assert.equal(repo.read('test.js'), TEST_JS + MY_LINE);
  });
});
