// Esc in the interactive session, in a real pseudo-terminal (tmux) against the fake Anthropic
// server, which holds its answers until the test releases them: an arrow key during a turn does not
// stop it; Esc during a model call stops the turn as Ctrl-C does and gives the prompt back; /help
// lists the person's custom command, and `/greet Ada` sends its text as the next message.
import { test } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, waitUntil } from '../helpers/cli.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

// The text of a request's last user message.
function lastUserText(body: MessagesBody): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text).join('');
}

test('an arrow key during a turn does not stop it; Esc during a model call gives the prompt back; /greet Ada is listed and sent as its text', async () => {
  const repo = await scratch.repo({ 'README.md': '# esc\n' });
  const config = scratch.dir('savepoint-xdg-');
  mkdirSync(join(config, 'savepoint', 'commands'), { recursive: true });
  writeFileSync(join(config, 'savepoint', 'commands', 'greet.md'), '---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n');
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
  const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: { ...fakeEnv(fake), XDG_CONFIG_HOME: config } });
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

  term.type('/help');
  await term.waitFor(/^ {2}\/greet <name>\s+Greets someone \(yours\)$/m);
  term.type('/greet Ada');
  await term.waitFor(/→ answers "Later answer\."[\s\S]*^›\s*$/m);
  assert.equal(fake.requests.length, 3);
  assert.equal(lastUserText(fake.requests[2]!), 'Say hello to Ada.');
  term.keys('C-d');
  assert.equal(await exited(term), 0);
  assertNoStack(term.screen());
});
