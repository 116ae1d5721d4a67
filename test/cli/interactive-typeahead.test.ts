// Lines typed while a turn of the interactive session runs are not lost: in a real pseudo-terminal
// (tmux) against the fake Anthropic server, a slash command and a follow-up typed during the first
// turn are answered after it, in order, each once, and a line typed without Enter waits at the
// prompt to be finished.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, gitOut } from '../helpers/cli.js';
import { openSession } from '../helpers/tmux.js';

const scratch = useScratch();

test('a slash command and a message typed during a turn are answered after it, in order; a line without Enter waits at the prompt', async () => {
  const repo = await scratch.repo({ 'README.md': '# ahead\n' });
  // The first answer waits until the test has typed ahead.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fake = await scratch.fake([{ text: 'First answer.' }, { text: 'Second answer.' }], undefined, { gate: (index) => (index === 0 ? released : undefined) });
  const opts = { cwd: repo.root, env: fakeEnv(fake) };
  const term = openSession(scratch, ['--yes', '--no-sandbox'], opts);
  await term.waitFor(/^›\s*$/m);
  term.type('first');
  while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
  term.type('/nonsense');
  term.type('second');
  term.keys('-l', 'half a line');
  // Not waited for on the screen: the spinner redraws over what the terminal echoes. tmux handles
  // its commands in order, so once this capture answers, the keys are in the terminal's input.
  term.screen();
  release();
  const screen = await term.waitFor(/→ answers "Second answer\."[\s\S]*^› half a line\s*$/m);
  const after = screen.slice(screen.indexOf('answers "First answer."'));
  assert.match(after, /^› \/nonsense\n {2}There is no \/nonsense: \/help lists the commands\.\n› second\n/m, 'answered in the order typed');
  assertNoStack(screen);
  assert.equal(fake.requests.length, 2);
  const subjects = await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']);
  assert.equal(subjects.split('\n').filter((s) => / #\d+ user "/.test(s)).length, 1, 'the follow-up once');
  assert.match(subjects, / #\d+ user "second"/);
  term.keys('C-u', 'C-d');
});

test("a message typed during a turn does not answer the turn's approval question: the question waits for its own answer, the message is answered after the turn", async () => {
  const repo = await scratch.repo({ 'README.md': '# ahead\n' });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fake = await scratch.fake(
    [{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'noted\n' } }] }, { text: 'Wrote the notes.' }, { text: 'Second answer.' }],
    undefined,
    { gate: (index) => (index === 0 ? released : undefined) },
  );
  // No --yes: the write asks.
  const term = openSession(scratch, ['--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
  await term.waitFor(/^›\s*$/m);
  term.type('write the notes');
  while (fake.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
  term.type('second');
  term.screen(); // tmux handles its commands in order: the keys are in the terminal's input now
  release();
  await term.waitFor(/Allow write_file notes\.txt\?.*$/m);
  term.type('y');
  const screen = await term.waitFor(/→ answers "Second answer\."/);
  assert.equal(repo.read('notes.txt'), 'noted\n', 'the write ran: the question took the "y" typed after it');
  assert.match(screen.slice(screen.indexOf('Wrote the notes.')), /^› second\n/m, 'the message typed during the turn is answered after it');
  assertNoStack(screen);
  const subjects = await gitOut(repo.root, ['log', '--format=%s', 'agent-journal']);
  assert.doesNotMatch(subjects, /declined/);
  assert.equal(subjects.split('\n').filter((s) => / #\d+ user "second"/.test(s)).length, 1, 'the message once');
  term.keys('C-u', 'C-d');
});
