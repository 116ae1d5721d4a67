// The interactive session in a real pseudo-terminal (tmux), against the fake Anthropic server: a
// task and a follow-up in one `savepoint` session, /exit; `savepoint -c` and a third message; a
// kill -9 in the middle of that turn and `savepoint -c` again, which finishes it. One run then
// holds the three messages once each, no finished model request was sent twice, the command ran
// once, and no screen shows a stack trace. Also: slash commands, Ctrl-C, -p.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertToolPairing, fakeEnv, gitOut, journalPaths, runCli, runIds } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';
import { turnIndex } from '../../src/model/script-turn.js';

const scratch = useScratch();

// By the number of assistant messages: the task's two turns, the first follow-up's two (with a
// command), the second follow-up's one.
const TURNS: ScriptTurn[] = [
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'First answer.' },
  { text: 'Logging.', tools: [{ name: 'run_bash', input: { command: 'echo once >> log.txt' } }] },
  { text: 'Second answer.' },
  { text: 'Third answer.' },
];

// A live answer in the session: streamed under the steps (on a terminal it is not printed again
// under "Final answer"), then its step line; `then` is what must follow it.
function answered(text: RegExp, then?: RegExp): RegExp {
  return new RegExp(`^ {6}${text.source}\\n.*→ answers "${text.source}"${then ? then.source : ''}`, 'm');
}

describe('the interactive session', { concurrency: true }, () => {
  test('a task and a follow-up, /exit, -c and a third message, a kill -9 mid-turn and -c again: one run, each message once, nothing sent or run twice', async () => {
    const repo = await scratch.repo({ 'README.md': '# session\n' });
    const hold = new Set([4]);
    const fake = await scratch.fake(TURNS, hold);
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const opts = { cwd: repo.root, env };
    const screens: string[] = [];

    const first = openSession(scratch, ['--yes', '--no-sandbox'], opts);
    await first.waitFor(/^›\s*$/m);
    first.type('read the readme');
    await first.waitFor(answered(/First answer\./));
    first.type('now log it');
    await first.waitFor(answered(/Second answer\./));
    // The session held its run: the follow-up replays nothing (issue 39), and its totals still count the run's earlier steps.
    assert.doesNotMatch(first.screen(), /earlier steps? replayed from the journal/);
    assert.match(first.screen(), /7 steps \(3\s+replayed, 4 live\)/);
    first.type('/exit');
    assert.equal(await exited(first), 0);
    screens.push(first.screen());
    assert.equal(fake.requests.length, 4);

    const second = openSession(scratch, ['-c', '--yes', '--no-sandbox'], opts);
    await second.waitFor(/Second answer\.[\s\S]*^›\s*$/m);
    second.type('and a third');
    while (fake.requests.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    second.kill9();
    assert.equal(await exited(second), 137);
    screens.push(second.screen());

    hold.delete(4);
    const third = openSession(scratch, ['-c', '--yes', '--no-sandbox'], opts);
    await third.waitFor(answered(/Third answer\./, /[\s\S]*^›\s*$/m));
    third.keys('C-d');
    assert.equal(await exited(third), 0);
    screens.push(third.screen());

    for (const screen of screens) assertNoStack(screen);
    assert.deepEqual(await runIds(repo.root), [(await runIds(repo.root))[0]], 'one run');
    const users = (await gitOut(repo.root, ['log', '--reverse', '--format=%s', 'agent-journal'])).split('\n').filter((s) => / #\d+ user "/.test(s));
    assert.equal(users.length, 2, `the two follow-ups once each:\n${users.join('\n')}`);
    assert.match(users[0]!, /now log it/);
    assert.match(users[1]!, /and a third/);
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'once\n', 'the command ran once');
    // Six requests: five turns, and the one the kill cut off asked again (it never finished).
    assert.equal(fake.requests.length, 6);
    const bodies = fake.requests.map((r) => JSON.stringify(r.messages));
    assert.equal(bodies[5], bodies[4], 'the unfinished request is the one asked again');
    assert.equal(new Set(bodies.slice(0, 5)).size, 5, 'no finished request was sent twice');
    assertToolPairing(fake.requests);
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-user.json')).length, 2);
  });

  test('slash commands answer at the prompt, an unknown one in one line, and Ctrl-C at an empty prompt leaves with 0', async () => {
    const repo = await scratch.repo({ 'README.md': '# slash\n' });
    const fake = await scratch.fake([{ text: 'Hello.' }, { text: 'Hello on the new model.' }]);
    const opts = { cwd: repo.root, env: fakeEnv(fake) };
    const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', 'claude-one'], opts);
    await term.waitFor(/^›\s*$/m);
    term.type('/help');
    await term.waitFor(/\/fork <step>/);
    term.type('/nonsense');
    await term.waitFor(/There is no \/nonsense: \/help lists the commands\./);
    term.type('say hello');
    await term.waitFor(answered(/Hello\./));
    term.type('/cost');
    await term.waitFor(/› \/cost\n {2}Tokens .* 1 model call/);
    term.type('/model claude-two');
    await term.waitFor(/From the next turn on, claude-two answers/);
    term.type('again');
    await term.waitFor(answered(/Hello on the new model\./));
    term.type('/runs');
    await term.waitFor(/› \/runs\n[\s\S]*say hello[\s\S]*^›\s*$/m);
    term.keys('C-c');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.deepEqual(fake.requests.map((r) => r.model), ['claude-one', 'claude-two']);
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-config.json')).length, 1);
  });

  test('-p <task> is run <task>, and -c with no terminal says it needs one', async () => {
    const repo = await scratch.repo({ 'README.md': '# print\n' });
    const fake = await scratch.fake([{ text: 'Printed.' }]);
    const printed = await runCli(['-p', 'say printed', '--yes'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /Final answer\nPrinted\./);
    const noTerminal = await runCli(['-c'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(noTerminal.code, 2);
    assert.match(noTerminal.stderr, /needs a terminal/);
    assertNoStack(noTerminal.stderr);
  });

  test('-r with a run that does not exist ends with its error, exit 1, and opens no prompt', async () => {
    const repo = await scratch.repo({ 'README.md': '# none\n' });
    const term = openSession(scratch, ['-r', 'no-such-run', '--yes'], { cwd: repo.root });
    assert.equal(await exited(term), 1);
    assert.match(term.screen(), /There is no run "no-such-run"/);
    assert.doesNotMatch(term.screen(), /^›/m);
    assertNoStack(term.screen());
  });

  test('Ctrl-C in a turn stops it and the prompt comes back; the next message goes on in the same run', async () => {
    const repo = await scratch.repo({ 'README.md': '# stop\n' });
    const hold = new Set([1]);
    const fake = await scratch.fake([{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Answered after the stop.' }], hold);
    const opts = { cwd: repo.root, env: fakeEnv(fake) };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], opts);
    await term.waitFor(/^›\s*$/m);
    term.type('take your time');
    while (fake.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    term.keys('C-c');
    await term.waitFor(/Stopped\. Every finished step is kept; the next message goes on from here\.\n^›\s*$/m);
    hold.delete(1);
    term.type('go on');
    await term.waitFor(answered(/Answered after the stop\./));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.equal((await runIds(repo.root)).length, 1, 'one run');
    assert.match(await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']), / #3 user "go on"/);
    assertToolPairing(fake.requests);
  });

  test('/model mid-run, a kill -9 in the next turn and the identical -c: the change replays exactly and the turn goes to the new model', async () => {
    const repo = await scratch.repo({ 'README.md': '# model\n' });
    const hold = new Set([1]);
    const fake = await scratch.fake([{ text: 'One.' }, { text: 'Two.' }], hold);
    const opts = { cwd: repo.root, env: { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') } }; // one settings folder for both terminals
    const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', 'claude-one'], opts);
    await term.waitFor(/^›\s*$/m);
    term.type('first');
    await term.waitFor(answered(/One\./));
    term.type('/model claude-two');
    await term.waitFor(/From the next turn on, claude-two answers/);
    // The change asks the model nothing: the earlier answer is not shown again as if it were new.
    assert.doesNotMatch(term.screen().slice(term.screen().lastIndexOf('/model claude-two')), /Final answer|One\./);
    term.type('second');
    while (fake.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    term.kill9();
    assert.equal(await exited(term), 137);

    hold.delete(1);
    const again = openSession(scratch, ['-c', '--yes', '--no-sandbox'], opts);
    await again.waitFor(answered(/Two\./, /[\s\S]*^›\s*$/m));
    assert.match(again.screen(), /model claude-two/);
    again.type('/exit');
    assert.equal(await exited(again), 0);
    assertNoStack(again.screen());
    assert.deepEqual(fake.requests.map((r) => r.model), ['claude-one', 'claude-two', 'claude-two']);
    assert.equal(JSON.stringify(fake.requests[2]!.messages), JSON.stringify(fake.requests[1]!.messages));
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-config.json')).length, 1);
  });

  test("'a' at an approval remembers the narrowest rule: written to .savepoint/settings.local.json, the same command next is not asked", async () => {
    const repo = await scratch.repo({ 'README.md': '# always\n' });
    const fake = await scratch.fake([
      { tools: [{ name: 'run_bash', input: { command: 'echo one >> log.txt' } }] },
      { tools: [{ name: 'run_bash', input: { command: 'echo one >> log.txt' } }] },
      { text: 'Logged twice.' },
    ]);
    // A config folder of its own: the write keeps the folder trusted, recorded in that folder's trust store (docs/trust.md).
    const opts = { cwd: repo.root, env: { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') } };
    const term = openSession(scratch, ['run', '--no-sandbox', 'log twice'], opts);
    await term.waitFor(/Allow run_bash "echo one >> log\.txt"\?.*\[a\]lways:\s*$/m);
    term.type('a');
    await term.waitFor(/Allow "run_bash\(echo one >> log\.txt\)" from now on: \[s\]ession only \/ \[w\]rite it to \.savepoint\/settings\.local\.json:\s*$/m);
    term.type('w');
    await term.waitFor(answered(/Logged twice\./));
    assert.equal(await exited(term), 0);
    assert.equal(term.screen().match(/Allow run_bash "echo one/g)?.length, 1, 'the second time is not asked');
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'one\none\n');
    const local = JSON.parse(readFileSync(join(repo.root, '.savepoint', 'settings.local.json'), 'utf8')) as { permissions: { allow: string[] } };
    assert.deepEqual(local.permissions.allow, ['run_bash(echo one >> log.txt)']);
  });

  test('-r with no run lists this worktree\'s runs to pick from; the chosen run gets the next message', async () => {
    const repo = await scratch.repo({ 'README.md': '# pick\n' });
    const fake = await scratch.fake(() => ({ text: `Answer ${fake.requests.length}.` }));
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    assert.equal((await runCli(['run', '--yes', 'the older task'], { cwd: repo.root, env })).code, 0);
    assert.equal((await runCli(['run', '--yes', 'the newer task'], { cwd: repo.root, env })).code, 0);
    const term = openSession(scratch, ['-r', '--yes', '--no-sandbox'], { cwd: repo.root, env });
    const list = await term.waitFor(/Which run\? \[1-2, or an id\]:\s*$/m);
    assert.match(list, /1 +the newer task +finished .*1 step/);
    assert.match(list, /2 +the older task +finished/);
    term.type('2');
    await term.waitFor(/^›\s*$/m);
    term.type('one more thing');
    await term.waitFor(answered(/Answer 3\./));
    term.type('/diff');
    await term.waitFor(/› \/diff\n[\s\S]*^›\s*$/m);
    term.type('/fork 1');
    await term.waitFor(/Forked the-older-task-\S+ at step 1 as (\S+): the next message goes to it/);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    const older = (await runIds(repo.root)).find((id) => id.startsWith('the-older-task') && !id.includes('fork'))!;
    assert.match(await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']), new RegExp(`${older} #\\d+ user "one more thing"`));
    assert.ok((await runIds(repo.root)).some((id) => id.startsWith(`${older}-fork-1`)), 'the fork exists');
  });

  test('/compact summarizes the conversation as journaled steps; the next turn sends the summary, and a replay asks nothing', async () => {
    const repo = await scratch.repo({ 'README.md': '# compact\n' });
    const read = { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] };
    const fake = await scratch.fake((body) => {
      if (JSON.stringify(body.messages.at(-1)).includes('after compacting')) return { text: 'After the compaction.' };
      return turnIndex(body.messages) < 3 ? read : { text: 'Read three times.' };
    });
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('read it three times');
    await term.waitFor(answered(/Read three times\./));
    const before = fake.requests.length;
    term.type('/compact');
    await term.waitFor(/config compact[\s\S]*compact: asked for[\s\S]*^›\s*$/m);
    assert.equal(fake.requests.length, before + 1, 'one summarizing request');
    assert.doesNotMatch(term.screen().slice(term.screen().lastIndexOf('/compact')), /Final answer|Read three times\./);
    term.type('after compacting, answer');
    await term.waitFor(answered(/After the compaction\./));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    const last = fake.requests.at(-1)!;
    assert.ok(last.messages.length < fake.requests[before - 1]!.messages.length, 'the turn after /compact sends fewer messages than the one before it');
    assert.match(JSON.stringify(last.messages[0]), /summary|Summary/);
    const sent = fake.requests.length;
    const id = (await runIds(repo.root))[0]!;
    const replay = await runCli(['resume', id], { cwd: repo.root, env });
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /Final answer\nAfter the compaction\./);
    assert.equal(fake.requests.length, sent, 'the replay sends nothing');
  });
});
