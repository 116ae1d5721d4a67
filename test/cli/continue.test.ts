// `savepoint continue "<message>"` through the real CLI against the fake Anthropic server: on a
// finished run the earlier steps replay with no model call and the model answers the follow-up;
// a kill -9 during the follow-up's model call (or after its command ran) and the identical command
// resumes it without adding it twice, while the same words after the run answered are a new message; a run stopped by --max-steps hears the follow-up at its next model call; and `runs`,
// `log` and the HTML page (in headless Chromium) show each user turn.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHROMIUM, chromiumDom } from '../helpers/chromium.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import {
  assertFsckClean,
  assertStepModes,
  assertToolPairing,
  fakeEnv,
  gitOut,
  journalPaths,
  runCli,
  startCli,
  waitUntil,
} from '../helpers/cli.js';

const scratch = useScratch();

// A read, an answer, then the answer to a follow-up: turns by the number of assistant messages.
const TURNS: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'The README is one line.' },
  { text: 'Added the test you asked for.' },
];

const userSteps = async (root: string) => (await journalPaths(root)).filter((p) => /\/steps\/.*-user\.json$/.test(p));
const userCommits = async (root: string) => (await gitOut(root, ['log', '--format=%s', 'agent-journal'])).split('\n').filter((s) => / #\d+ user "/.test(s));

// The text blocks of a request's last (user) message.
function lastUserText(body: { messages: { role: string; content: unknown }[] }): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text).join('');
}

describe('savepoint continue', { concurrency: true }, () => {
  test('killed (SIGKILL) after a command of the follow-up\'s turn ran, the identical command resumes that turn: no second user step, the command not run again', async () => {
    const repo = await scratch.repo({ 'README.md': '# continue\n' });
    const turns: ScriptTurn[] = [
      { text: 'The README is one line.' },
      { text: 'Logging.', tools: [{ name: 'run_bash', input: { command: 'echo once >> log.txt' } }] },
      { text: 'Logged it.' },
      { text: 'Nothing more to log.' },
    ];
    const hold = new Set([2]);
    const fake = await scratch.fake(turns, hold);
    assert.equal((await runCli(['run', '--yes', '--no-sandbox', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) })).code, 0);

    const live = startCli(['continue', '--yes', '--no-sandbox', 'yes'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length === 3, 'the model call after the command', { child: live });
    live.kill();
    assert.equal((await live.result).signal, 'SIGKILL');
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'once\n');

    hold.delete(2);
    const again = await runCli(['continue', '--yes', '--no-sandbox', 'yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /This follow-up was already given at step 2: it is not added again\./);
    assert.match(again.stdout, /Final answer\nLogged it\./);
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'once\n', 'the command ran once');
    assert.equal((await userSteps(repo.root)).length, 1, 'one user step in the journal');
    assert.equal((await userCommits(repo.root)).length, 1);
    assert.equal(fake.requests.length, 4);
    assert.equal(JSON.stringify(fake.requests[3]!.messages), JSON.stringify(fake.requests[2]!.messages), 'the unfinished request is the one asked again');
    assertToolPairing(fake.requests);
    await assertFsckClean(repo.root);

    // Answered now: the same words once more are the person's new message.
    const newer = await runCli(['continue', '--yes', '--no-sandbox', 'yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(newer.code, 0, newer.stderr);
    assert.match(newer.stdout, /Final answer\nNothing more to log\./);
    assert.equal((await userSteps(repo.root)).length, 2);
    assert.equal(fake.requests.length, 5);
  });

  test('killed (SIGKILL) during the follow-up\'s model call, the identical command resumes it and never adds it twice', async () => {
    const repo = await scratch.repo({ 'README.md': '# continue\n' });
    const hold = new Set([2]);
    const fake = await scratch.fake(TURNS, hold);
    assert.equal((await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) })).code, 0);

    const live = startCli(['continue', '--yes', 'now add a test'], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length === 3, 'the follow-up\'s model call', { child: live });
    assert.equal((await userSteps(repo.root)).length, 1, 'the follow-up is recorded before the model is asked');
    live.kill();
    assert.equal((await live.result).signal, 'SIGKILL');

    hold.delete(2);
    const again = await runCli(['continue', '--yes', 'now add a test'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 4); // the read run, its answer and the follow-up replay
    assert.match(again.stdout, /Final answer\nAdded the test you asked for\./);
    assert.equal(fake.requests.length, 4);
    assert.equal(lastUserText(fake.requests[3]!), 'now add a test', 'the follow-up reaches the model once, as the last turn');
    assert.equal(fake.requests[3]!.messages.length, 5);
    assert.equal((await userSteps(repo.root)).length, 1);
    assert.deepEqual((await userCommits(repo.root)).length, 1, 'git log agent-journal holds one follow-up commit');
    await assertFsckClean(repo.root);
  });

  test('a run stopped by --max-steps hears the follow-up at its next model call, with its tool results', async () => {
    const repo = await scratch.repo({ 'README.md': '# continue\n' });
    const fake = await scratch.fake(TURNS);
    const stopped = await runCli(['run', '--yes', '--max-steps', '2', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(stopped.code, 3, stopped.stderr); // 3: stopped at a limit the user set
    const next = await runCli(['continue', '--yes', 'and say how long it is'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(next.code, 0, next.stderr);
    const lines = assertStepModes(next.stdout, 2);
    assert.match(lines[2]!.text, /^user "and say how long it is"/);
    assert.equal(fake.requests.length, 2);
    const last = fake.requests[1]!;
    assert.equal(lastUserText(last), 'and say how long it is', 'the follow-up joins the tool results in one user turn');
    assertToolPairing(fake.requests);
  });

  // One finished run and three follow-ups: the first replays the run with no model call, the third
  // repeats the second's words after the run answered them (a new message), and runs, log and the
  // HTML page then show every user turn; last, the run is forked with --message (last: runs, log and
  // the page would otherwise show the fork, the most recent run).
  test('follow-ups on a finished run: earlier steps replay with no model call, the identical follow-up after the run answered is a new message, and runs, log and the HTML page show each user turn; fork --message goes on at once, the message its user turn at --at', async (t) => {
    const repo = await scratch.repo({ 'README.md': '# continue\n' });
    const fake = await scratch.fake([...TURNS, { text: 'And a second one.' }, { text: 'Yes again: done.' }]);
    const first = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(fake.requests.length, 2);

    const next = await runCli(['continue', '--yes', 'now add a test'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(fake.requests.length, 3, 'one model call: the answer to the follow-up');
    const lines = assertStepModes(next.stdout, 3);
    assert.match(lines[3]!.text, /^user "now add a test"/);
    assert.match(lines[4]!.text, /model turn 3/);
    assert.match(next.stdout, /Final answer\nAdded the test you asked for\./);
    assert.equal(lastUserText(fake.requests[2]!), 'now add a test');
    assertToolPairing(fake.requests);

    const second = await runCli(['continue', '--yes', 'and a <second> one'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(fake.requests.length, 4);

    // The same words twice are two answers: the run had answered the first, so the second is the person's too.
    const again = await runCli(['continue', '--yes', 'and a <second> one'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    const againLines = assertStepModes(again.stdout, 7);
    assert.match(againLines[7]!.text, /^user "and a <second> one"/);
    assert.doesNotMatch(again.stdout, /already given/);
    assert.match(again.stdout, /Final answer\nYes again: done\./);
    assert.equal(fake.requests.length, 5, 'the model answers the repeated follow-up');
    assert.equal(lastUserText(fake.requests[4]!), 'and a <second> one');
    assert.equal(fake.requests[4]!.messages.filter((m) => m.role === 'user' && lastUserText({ messages: [m] }) === 'and a <second> one').length, 2, 'both answers reach the model');
    assert.equal((await userSteps(repo.root)).length, 3);
    assertToolPairing(fake.requests);

    const runs = await runCli(['runs', '--json'], { cwd: repo.root });
    const [row] = (JSON.parse(runs.stdout) as { runs: Array<{ followUps: string[] }> }).runs;
    assert.deepEqual(row!.followUps, ['now add a test', 'and a <second> one', 'and a <second> one']);
    assert.match((await runCli(['runs'], { cwd: repo.root })).stdout, /3 follow-ups, latest "and a <second> one"/);

    const log = await runCli(['log'], { cwd: repo.root });
    assert.match(log.stdout, /#4 {2}user .*\n\s+▌ now add a test\n/);
    assert.match(log.stdout, /#6 {2}user .*\n\s+▌ and a <second> one\n/);
    assert.match(log.stdout, /#8 {2}user .*\n\s+▌ and a <second> one\n/);
    const json = JSON.parse((await runCli(['log', '--json'], { cwd: repo.root })).stdout) as { steps: Array<{ kind: string; message: string | null }> };
    assert.deepEqual(json.steps.filter((s) => s.kind === 'user').map((s) => s.message), ['now add a test', 'and a <second> one', 'and a <second> one']);

    const page = join(scratch.dir(), 'turns.html');
    assert.equal((await runCli(['log', '--html', page], { cwd: repo.root })).code, 0);
    assert.match(readFileSync(page, 'utf8'), /<div class="turn" id="turn-6">.*and a &lt;second&gt; one/s);
    assert.match(readFileSync(page, 'utf8'), /<div class="turn" id="turn-8">.*and a &lt;second&gt; one/s);
    if (existsSync(CHROMIUM)) {
      const dom = await chromiumDom(`file://${page}`, scratch.dir('savepoint-chromium-'));
      assert.equal(dom.match(/<div class="turn"/g)?.length, 3);
      assert.match(dom, /Follow-up instruction · #4<\/div><div>now add a test<\/div>/);
      assert.match(dom, /and a &lt;second&gt; one/);
    }

    // fork --message: the new run goes on at once, the message its user turn at --at.
    const id = /run (\S+)/.exec(first.stdout)![1]!;
    const asked = fake.requests.length;
    const fork = await runCli(['fork', id, '--at', '3', '--message', 'say it in French', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, new RegExp(`Forked ${id} at step 3 as ${id}-fork-3`));
    const forkLines = assertStepModes(fork.stdout, 2);
    assert.match(forkLines[2]!.text, /^user "say it in French"/);
    assert.equal(fake.requests.length, asked + 1, 'one model call, for the fork');
    assert.equal(lastUserText(fake.requests.at(-1)!), 'say it in French');
    assertToolPairing(fake.requests);
    if (!existsSync(CHROMIUM)) t.skip(`${CHROMIUM} is not installed (.ci/run installs it)`);
  });
});

