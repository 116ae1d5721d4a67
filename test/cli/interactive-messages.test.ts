// What the person sends in an interactive session is what the model hears, in a real
// pseudo-terminal (tmux) against the fake Anthropic server, with the requests and the journal as
// the judge: every message is recorded once, even one that repeats the last word for word.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertToolPairing, fakeEnv, gitOut, journalPaths } from '../helpers/cli.js';
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
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
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
  });
});
