// What the person sends in an interactive session is what the model hears, in a real
// pseudo-terminal (tmux) against the fake Anthropic server, with the requests and the journal as
// the judge: every message is recorded once, even one that repeats the last word for word; a
// message (or /model) after Ctrl-C reaches the model before anything left of the stopped turn runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertToolPairing, fakeEnv, gitOut, journalJson, journalPaths, lastToolResults, resultText, runCli, runIds, waitUntil } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

// The text blocks of a request's last (user) message.
function lastUserText(body: { messages: { role: string; content: unknown }[] }): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

// The follow-ups the journal recorded, in order (their commits' subjects).
async function userSubjects(root: string): Promise<string[]> {
  return (await gitOut(root, ['log', '--reverse', '--format=%s', 'agent-journal'])).split('\n').filter((s) => / #\d+ user "/.test(s));
}

describe('the person\'s messages in a session', { concurrency: true }, () => {
  test('"yes" twice is two answers: each is recorded and reaches the model', async () => {
    const repo = await scratch.repo({ 'README.md': '# yes\n' });
    const turns: ScriptTurn[] = [
      { text: 'I found two bugs. Shall I fix the first one?' },
      { text: 'Fixed the first. Shall I fix the second one?' },
      { text: 'Fixed the second.' },
    ];
    const fake = await scratch.fake(turns);
    // git's own trace of the commands savepoint starts: the repository is found once per session.
    const trace = join(scratch.dir('git-trace-'), 'trace');
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: { ...fakeEnv(fake), GIT_TRACE: trace } });
    await term.waitFor(/^›\s*$/m);
    term.type('find the bugs');
    await term.waitFor(/answers "I found two bugs[\s\S]*^›\s*$/m);
    term.type('yes');
    await term.waitFor(/answers "Fixed the first[\s\S]*^›\s*$/m);
    term.type('yes');
    await term.waitFor(/answers "Fixed the second\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.doesNotMatch(term.screen(), /already given/);
    assert.equal(fake.requests.length, 3, 'the model answered each message');
    assert.equal(lastUserText(fake.requests[2]!), 'yes', 'the second "yes" is the last thing the model heard');
    const subjects = await userSubjects(repo.root);
    assert.equal(subjects.length, 2, `two user steps:\n${subjects.join('\n')}`);
    assert.ok(subjects.every((s) => / user "yes"/.test(s)));
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-user.json')).length, 2);
    assertToolPairing(fake.requests);
    const found = readFileSync(trace, 'utf8').split('\n').filter((line) => / built-in: git rev-parse .*--show-toplevel/.test(line));
    assert.equal(found.length, 1, `the repository is found once for the session's three messages, not at each:\n${found.join('\n')}`);
  });

  // The model's answer runs two commands: the first waits, the second deletes data.txt.
  const TWO_COMMANDS: ScriptTurn[] = [
    { text: 'Two commands.', tools: [{ name: 'run_bash', input: { command: 'echo started > started.txt; sleep 30' } }, { name: 'run_bash', input: { command: 'rm data.txt' } }] },
    { text: 'Understood: I ran nothing else.' },
  ];

  for (const between of ['nothing', '/model'] as const) {
    test(`Ctrl-C in the first of two commands${between === '/model' ? ', /model,' : ''} then a message: the second command never runs, the message reaches the model with the stopped turn's results`, async () => {
      const repo = await scratch.repo({ 'README.md': '# stop\n', 'data.txt': 'keep me\n' });
      const fake = await scratch.fake(TWO_COMMANDS);
      const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
      const term = openSession(scratch, ['--yes', '--no-sandbox', '--model', 'claude-one'], { cwd: repo.root, env });
      await term.waitFor(/^›\s*$/m);
      term.type('clean up');
      await waitUntil(() => existsSync(join(repo.root, 'started.txt')), 'the first command to start');
      term.keys('C-c');
      await term.waitFor(/Stopped\. Every finished step is kept; the next message goes on from here\.\n^›\s*$/m);
      assert.ok(existsSync(join(repo.root, 'data.txt')), 'the stop ran nothing more');
      if (between === '/model') {
        term.type('/model claude-two');
        await term.waitFor(/From the next turn on, claude-two answers[\s\S]*^›\s*$/m);
        assert.ok(existsSync(join(repo.root, 'data.txt')), '/model ran nothing of the stopped turn');
        assert.equal(fake.requests.length, 1, '/model asks the model nothing');
      }
      term.type('stop, do not run anything else');
      await term.waitFor(/answers "Understood: I ran nothing else\."[\s\S]*^›\s*$/m);
      term.type('/exit');
      assert.equal(await exited(term), 0);
      assertNoStack(term.screen());

      assert.ok(existsSync(join(repo.root, 'data.txt')), 'data.txt survives: the second command never ran');
      assert.equal(fake.requests.length, 2);
      const next = fake.requests[1]!;
      if (between === '/model') assert.equal(next.model, 'claude-two');
      const results = lastToolResults(next);
      assert.equal(results.length, 2, 'both calls answered, in the same request as the message');
      assert.match(resultText(results[0]!), /^stopped by the person \(Ctrl-C/);
      assert.equal(results[1]!.is_error, true);
      assert.match(resultText(results[1]!), /^not run: stopped by the person/);
      assert.equal(lastUserText(next), 'stop, do not run anything else', 'the message joins the results in that one user turn');
      assertToolPairing(fake.requests);

      // Journaled: the cut-off call's answer is a step of its own, and a replay asks nothing.
      const [run] = await runIds(repo.root);
      const rm = (await journalPaths(repo.root)).find((p) => p.endsWith('000003-run_bash.json'))!;
      const entry = await journalJson<{ input: { command: string }; result: { isError: boolean; output: string } }>(repo.root, rm);
      assert.equal(entry.input.command, 'rm data.txt');
      assert.match(entry.result.output, /^not run: stopped by the person/);
      const subjects = await userSubjects(repo.root);
      assert.equal(subjects.length, 1);
      const replay = await runCli(['resume', run!], { cwd: repo.root, env });
      assert.equal(replay.code, 0, replay.stderr);
      assert.match(replay.stdout, /Final answer\nUnderstood: I ran nothing else\./);
      assert.equal(fake.requests.length, 2, 'the replay sends nothing');
      assert.ok(existsSync(join(repo.root, 'data.txt')));
    });
  }

  test('a pasted block of two lines is one message: with --yes nothing is acted on before its condition is seen', async () => {
    const repo = await scratch.repo({ 'README.md': '# paste\n', 'build/out.txt': 'built\n' });
    // Whatever the model is told, it answers once; the test reads what it was told.
    const fake = await scratch.fake([{ text: 'I will check for uncommitted files first.' }, { text: 'A second message was sent.' }]);
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
    await term.waitFor(/^›\s*$/m);
    term.paste('Delete the build directory\nbut only if it has no uncommitted files');
    await term.waitFor(/but only if it has no uncommitted files\s*$/m);
    assert.equal(fake.requests.length, 0, 'the paste alone sends nothing: the Enter after it does');
    term.keys('Enter');
    await term.waitFor(/answers "I will check for uncommitted[\s\S]*^›\s*$/m);
    // A pasted three-line error, then Enter: one more message, one more model turn.
    term.paste('TypeError: x is undefined\n    in main, app.js:3:9\n    in node:internal/main:1:1');
    term.keys('Enter');
    await term.waitFor(/answers "A second message was sent\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());

    assert.equal(fake.requests.length, 2, 'two messages, two model turns');
    assert.equal(lastUserText(fake.requests[0]!), 'Delete the build directory\nbut only if it has no uncommitted files', 'the task is the whole block, its newline kept');
    assert.equal(lastUserText(fake.requests[1]!), 'TypeError: x is undefined\n    in main, app.js:3:9\n    in node:internal/main:1:1');
    assert.ok(existsSync(join(repo.root, 'build', 'out.txt')), 'build/ was not deleted');
    const [run] = await runIds(repo.root);
    const record = await journalJson<{ task: string }>(repo.root, `runs/${run}/run.json`);
    assert.equal(record.task, 'Delete the build directory\nbut only if it has no uncommitted files');
    assert.equal((await userSubjects(repo.root)).length, 1, 'the error is one follow-up');
  });

  test('a block pasted while a turn runs stays one message for after it', async () => {
    const repo = await scratch.repo({ 'README.md': '# paste\n' });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const fake = await scratch.fake([{ text: 'First answer.' }, { text: 'Second answer.' }, { text: 'Third answer.' }], undefined, { gate: (index) => (index === 0 ? released : undefined) });
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
    await term.waitFor(/^›\s*$/m);
    term.type('first');
    while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    term.paste('line one\nline two\nline three');
    term.keys('Enter');
    term.screen(); // tmux handles its commands in order: the keys are in the terminal's input now
    release();
    await term.waitFor(/answers "Second answer\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.equal(fake.requests.length, 2, 'one message, one turn');
    assert.equal(lastUserText(fake.requests[1]!), 'line one\nline two\nline three');
    assert.equal((await userSubjects(repo.root)).length, 1);
  });
});
