// /fork in the interactive session (tmux): the fork goes live on its parent's files as they were at
// the fork point. The files the parent created after it are set aside (saved under a ref the screen
// names) and removed, with no drift question, while a file the person made meanwhile is kept and
// the model is told of it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assistantMessages, fakeEnv, gitOut, runIds } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

// The parent: #1 model, #2 write a.txt, #3 model, #4 write b.txt, #5 model, #6 write c.txt, #7 the answer.
const PARENT: ScriptTurn[] = [
  { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }] },
  { tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }] },
  { tools: [{ name: 'write_file', input: { path: 'c.txt', content: 'c\n' } }] },
  { text: 'Made three files.' },
];

describe('/fork in a session', () => {
  test('the fork goes on from the parent\'s files at the step: files the parent created later are set aside and named, no question, the person\'s own file kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# fork\n' });
    const fake = await scratch.fake((body: MessagesBody) => (JSON.stringify(body.messages.at(-1)).includes('only a, please') ? { text: 'Only a, then.' } : PARENT[assistantMessages(body)]!));
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('make three files');
    await term.waitFor(/→ answers "Made three files\."[\s\S]*^›\s*$/m);
    assert.ok(existsSync(join(repo.root, 'c.txt')));

    term.type('/fork 3');
    const forked = await term.waitFor(/Forked (\S+) at step 3 as (\S+): the next message goes to it/);
    const [, parent, fork] = /Forked (\S+) at step 3 as (\S+): the next message goes to it/.exec(forked)!;
    writeFileSync(join(repo.root, 'mine.txt'), 'my own notes\n');
    term.type('only a, please');
    await term.waitFor(/→ answers "Only a, then\."[\s\S]*^›\s*$/m);
    term.type('/exit');
    assert.equal(await exited(term), 0);
    const screen = term.screen();
    const flat = screen.replace(/\s+/g, ' ');
    assertNoStack(screen);

    assert.doesNotMatch(screen, /Restore the files as the run recorded them/, 'no drift question for what the fork decided');
    assert.doesNotMatch(flat, /Kept \d+ untracked file\(s\) the run never recorded: (b|c)\.txt/);
    assert.equal(existsSync(join(repo.root, 'b.txt')) || existsSync(join(repo.root, 'c.txt')), false, 'the files the parent created after step 3 are set aside');
    assert.equal(repo.read('a.txt'), 'a\n', 'the file of the steps the fork kept stays');
    assert.equal(repo.read('mine.txt'), 'my own notes\n', "the person's own file is kept");
    const saved = new RegExp(`saved in (refs/savepoint/saved/${fork}/1) \\(b\\.txt, c\\.txt\\): get them back with "git checkout refs/savepoint/saved/${fork}/1 -- :/"`).exec(flat);
    assert.ok(saved, `the screen names the ref:\n${screen}`);
    assert.equal(await gitOut(repo.root, ['ls-tree', '-r', '--name-only', saved[1]!]), 'b.txt\nc.txt');
    assert.equal(await gitOut(repo.root, ['show', `${saved[1]}:c.txt`]), 'c');

    // The fork's request: the parent's conversation up to step 2, then the person's file and the message.
    const last = fake.requests.at(-1)!;
    assert.equal(assistantMessages(last), 1);
    assert.match(JSON.stringify(last.messages.at(-1)), /the person changed these files by hand: added mine\.txt/);
    assert.ok((await runIds(repo.root)).includes(parent!));
  });
});
