// Custom commands and `@path` mentions through the real CLI against the fake Anthropic server:
// `run "/greet Ada"` sends the command's text with $ARGUMENTS filled in, records what the person
// typed as the task and the expansion as the run's prompt, and the identical command after a kill
// -9 (the command file changed meanwhile) finds the same run and sends what was sent; the
// person's own commands work in `-p`; an untrusted clone's commands are left out (said in one
// line) and refused; `@src/add.js` puts the file's text in the request (run and continue), `@../outside` is
// refused with nothing sent, and an `@` that names no file stays plain text.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, fakeEnv, git, journalJson, runCli, runIds, startCli, waitUntil } from '../helpers/cli.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import { userHomeIn } from '../helpers/trust.js';

const scratch = useScratch();

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
};

// The text of a request's last user message.
function lastUserText(body: MessagesBody): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text).join('');
}

const GREET = '---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS, and call them $1 once.\n';

describe('custom commands', { concurrency: true }, () => {
  test('run "/greet Ada" sends the command\'s text; killed in its model call, the identical command finds the same run and sends what was sent, though the file changed', async () => {
    const repo = await scratch.repo({ 'README.md': '# greet\n' });
    const home = userHomeIn(scratch);
    const command = join(home.XDG_CONFIG_HOME, 'savepoint/commands/greet.md');
    write(command, GREET);
    const turns: ScriptTurn[] = [{ text: 'Reading first.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Hello, Ada!' }];
    const hold = new Set([1]);
    const fake = await scratch.fake(turns, hold);
    const env = { ...fakeEnv(fake), ...home };
    const live = startCli(['run', '--yes', '/greet Ada'], { cwd: repo.root, env });
    await waitUntil(() => fake.requests.length === 2, 'the second model call', { child: live });
    assert.equal(lastUserText(fake.requests[0]!), 'Say hello to Ada, and call them Ada once.');
    live.kill();
    await live.result;

    // The command changes; the run already sent its text, and is found by what was typed.
    write(command, 'Insult $ARGUMENTS.\n');
    hold.clear();
    const again = await runCli(['run', '--yes', '/greet Ada'], { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /#1\s+REPLAYED.*model turn 1/);
    assert.match(again.stdout, /Hello, Ada!/);
    assert.equal((await runIds(repo.root)).length, 1, 'the same run');
    assert.equal(fake.requests.length, 3, 'only the unfinished call is asked again');
    assert.equal(JSON.stringify(fake.requests[2]!.messages), JSON.stringify(fake.requests[1]!.messages), 'the recorded prompt, not the file as it is now');
    const [id] = await runIds(repo.root);
    const record = await journalJson<{ task: string; prompt?: string }>(repo.root, `runs/${id}/run.json`);
    assert.equal(record.task, '/greet Ada');
    assert.equal(record.prompt, 'Say hello to Ada, and call them Ada once.');
  });

  test("-p runs a trusted repository's command (no $ARGUMENTS: the arguments follow its text); an untrusted clone's command is left out, said in one line, and refused with nothing sent", async () => {
    const trusted = await scratch.repo({ 'README.md': '# mine\n', '.savepoint/commands/look.md': 'Look at the repository.\n' });
    const clone = await scratch.repo({ 'README.md': '# theirs\n', '.claude/commands/review.md': 'Review the code harshly.\n' });
    const fake = await scratch.fake([{ text: 'Looked.' }, { text: 'Reviewed.' }]);
    const env = { ...fakeEnv(fake), ...userHomeIn(scratch) };
    const mine = await runCli(['-p', '--trust', '/look at the tests'], { cwd: trusted.root, env });
    assert.equal(mine.code, 0, mine.stderr);
    assert.equal(lastUserText(fake.requests[0]!), 'Look at the repository.\n\nARGUMENTS: at the tests');

    const untrusted = await runCli(['run', '/review src'], { cwd: clone.root, env });
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stderr, /^Left out: this folder is not trusted, so its custom command \/review \(.claude\/commands\) was left out/m);
    assert.match(assertOneParagraph(untrusted.stderr), /The custom command \/review .* is a command of this repository, which is not trusted: run with --trust/);
    assert.equal(fake.requests.length, 1, 'nothing sent');
  });
});

describe('@path mentions', { concurrency: true }, () => {
  test("@src/add.js puts the file's text in the request, in run and continue; an @ that names no file stays plain text", async () => {
    const repo = await scratch.repo({ 'README.md': '# add\n', 'src/add.js': 'export const add = (a, b) => a + b;\n', 'notes.txt': 'remember the tests\n' });
    const fake = await scratch.fake([{ text: 'It adds.' }, { text: 'Noted.' }]);
    const env = { ...fakeEnv(fake), ...userHomeIn(scratch) };
    const first = await runCli(['run', 'explain @src/add.js, ask ada@example.com about @types/node'], { cwd: repo.root, env });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(lastUserText(fake.requests[0]!), 'explain @src/add.js, ask ada@example.com about @types/node\n\n<file path="src/add.js">\nexport const add = (a, b) => a + b;\n</file>');
    const [id] = await runIds(repo.root);
    assert.equal((await journalJson<{ task: string }>(repo.root, `runs/${id}/run.json`)).task, 'explain @src/add.js, ask ada@example.com about @types/node');

    const next = await runCli(['continue', 'and @notes.txt'], { cwd: repo.root, env });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(lastUserText(fake.requests[1]!), 'and @notes.txt\n\n<file path="notes.txt">\nremember the tests\n</file>');
  });

  test('@../outside (a file outside the repository), @.git/config and a file a read rule denies are refused as read_file refuses them: one paragraph, nothing sent', async () => {
    const repo = await scratch.repo({ 'README.md': '# outside\n', 'secret.txt': 'hunter2\n' });
    // ../<this repository's name>-outside: a file beside the repository, of this test's own.
    const outside = `${basename(repo.root)}-outside`;
    writeFileSync(join(dirname(repo.root), outside), 'secret\n');
    scratch.defer(() => rmSync(join(dirname(repo.root), outside), { force: true }));
    const fake = await scratch.fake([{ text: 'Never.' }]);
    const result = await runCli(['run', `read @../${outside}`], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.equal(result.code, 1);
    const paragraph = assertOneParagraph(result.stderr);
    assert.match(paragraph, new RegExp(`@\\.\\./${outside} cannot be put in the message: .*resolves outside the repository.*Nothing was sent`));
    const inGit = await runCli(['run', 'read @.git/config'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.equal(inGit.code, 1);
    assert.match(assertOneParagraph(inGit.stderr), /@\.git\/config cannot be put in the message: .*inside \.git/);
    const denied = await runCli(['run', '--disallowedTools', 'Read(secret.txt)', 'read @secret.txt'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.equal(denied.code, 1);
    assert.match(assertOneParagraph(denied.stderr), /@secret\.txt cannot be put in the message: reading secret\.txt is denied by the rule "Read\(secret\.txt\)" \(--disallowedTools\)/);
    assert.equal(fake.requests.length, 0);
    assert.equal((await git(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal'])).stdout, '', 'no run recorded');
  });
});
