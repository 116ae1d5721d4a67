// Esc in the interactive session, in a real pseudo-terminal (tmux) against the fake Anthropic
// server, which holds its answers until the test releases them: an arrow key during a turn does not
// stop it; Esc during a model call stops the turn as Ctrl-C does and gives the prompt back, and the
// next message is answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, waitUntil } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

test('an arrow key during a turn does not stop it; Esc during a model call gives the prompt back, and the next message is answered', async () => {
  const repo = await scratch.repo({ 'README.md': '# esc\n' });
  let releaseFirst!: () => void;
  const first = new Promise<void>((resolve) => (releaseFirst = resolve));
  // The second message's call never answers: only Esc ends it. The message after it is answered at once.
  let heldSecond = false;
  const fake = await scratch.fake([{ text: 'First answer.' }, { text: 'Later answer.' }], undefined, {
    gate: (index) => {
      if (index === 0) return first;
      if (index === 1 && !heldSecond) {
        heldSecond = true;
        return new Promise<void>(() => {});
      }
      return undefined;
    },
  });
  const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
  await term.waitFor(/^›\s*$/m);
  term.type('first');
  await waitUntil(() => fake.requests.length === 1, 'the first model call');
  term.keys('Up', 'Left');
  term.screen(); // tmux handles its commands in order: the keys are in the terminal's input now
  releaseFirst();
  await term.waitFor(/→ answers "First answer\."[\s\S]*^›\s*$/m);
  assert.doesNotMatch(term.screen(), /Stopping|Stopped/, 'the arrow keys did not stop the turn');

  term.type('second');
  await waitUntil(() => fake.requests.length === 2, 'the second model call');
  term.keys('Escape');
  await term.waitFor(/Stopped\. Every finished step is kept; the next message goes on from here\.\n›\s*$/m);

  term.type('third');
  await term.waitFor(/→ answers "Later answer\."[\s\S]*^›\s*$/m);
  assert.equal(fake.requests.length, 3);
  term.keys('C-d');
  assert.equal(await exited(term), 0);
  assertNoStack(term.screen());
});
