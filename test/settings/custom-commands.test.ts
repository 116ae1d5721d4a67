// Custom slash commands: found in the repository's .savepoint/commands, then .claude/commands, then
// the person's own folder (the first of a name wins); a repository's only listed in an untrusted
// folder; expanded with $ARGUMENTS and $1..$9, or the arguments appended; front matter read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomCommandError } from '../../src/errors/index.js';
import { customCommand, expandCustomCommand, findCustomCommands, MAX_COMMAND_BYTES, parseFrontMatter } from '../../src/settings/custom-commands.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

function setUp() {
  const root = scratch.dir('savepoint-commands-');
  const config = scratch.dir('savepoint-config-');
  write(root, {
    '.savepoint/commands/review.md': '---\ndescription: "Review a file"\nargument-hint: <file>\n---\nReview $1 then $2 ($ARGUMENTS)\n',
    '.claude/commands/review.md': 'shadowed\n',
    '.claude/commands/fix.md': '\n  Fix the bug\nin detail\n',
    '.claude/commands/-bad.md': 'not a name',
    '.claude/commands/notes.txt': 'not markdown',
  });
  write(config, { 'savepoint/commands/fix.md': 'mine, shadowed', 'savepoint/commands/mine.md': 'My own' });
  return { root, env: { XDG_CONFIG_HOME: config } };
}

test('commands from the three folders, the first of each name, sorted, described by front matter or first line', () => {
  const { root, env } = setUp();
  const found = findCustomCommands(root, true, env);
  assert.deepEqual(found.map((c) => [c.name, c.source, c.description, c.argumentHint]), [
    ['fix', 'claude', 'Fix the bug', undefined],
    ['mine', 'user', 'My own', undefined],
    ['review', 'project', 'Review a file', '<file>'],
  ]);
  assert.equal(customCommand(found, 'mine')?.file, join(env.XDG_CONFIG_HOME, 'savepoint', 'commands', 'mine.md'));
  assert.equal(customCommand(found, 'nope'), undefined);
});

test("an untrusted folder lists the repository's commands unread and refuses to expand them; the person's own still work", () => {
  const { root, env } = setUp();
  const found = findCustomCommands(root, false, env);
  const review = customCommand(found, 'review')!;
  assert.deepEqual([review.untrusted, review.description], [true, '']);
  assert.throws(() => expandCustomCommand(review, 'a'), (error: unknown) => error instanceof CustomCommandError && error.code === 'ECOMMAND' && /\/review .* not trusted.*nothing was sent/.test(error.message));
  assert.equal(expandCustomCommand(customCommand(found, 'mine')!, ''), 'My own');
});

test('arguments fill $ARGUMENTS and $1..$9 (a missing word is empty), or follow a text that uses neither', () => {
  const { root, env } = setUp();
  const found = findCustomCommands(root, true, env);
  assert.equal(expandCustomCommand(customCommand(found, 'review')!, ' a.ts  b.ts '), 'Review a.ts then b.ts (a.ts  b.ts)');
  assert.equal(expandCustomCommand(customCommand(found, 'review')!, 'a.ts'), 'Review a.ts then  (a.ts)');
  assert.equal(expandCustomCommand(customCommand(found, 'fix')!, 'quickly'), 'Fix the bug\nin detail\n\nARGUMENTS: quickly');
  assert.equal(expandCustomCommand(customCommand(found, 'fix')!, '  '), 'Fix the bug\nin detail');
});

test('a command file too long or gone is listed with why, and using it names the file', () => {
  const { root, env } = setUp();
  write(root, { '.savepoint/commands/huge.md': 'x'.repeat(MAX_COMMAND_BYTES + 1) });
  const huge = customCommand(findCustomCommands(root, true, env), 'huge')!;
  assert.match(huge.description, /^\(is \d+ bytes, more than the 262144 a command may have\)$/);
  assert.throws(() => expandCustomCommand({ ...huge, file: join(root, 'gone.md') }, ''), (error: unknown) => error instanceof CustomCommandError && /cannot be read \(ENOENT\)/.test(error.message));
});

test('front matter: quoted values unquoted, keys case-insensitive, no front matter leaves the text whole', () => {
  assert.deepEqual(parseFrontMatter("---\r\nDescription: 'Say hi'\r\nother: x\r\n---\r\nHello"), { body: 'Hello', description: 'Say hi' });
  assert.deepEqual(parseFrontMatter('Hello\n---\nno'), { body: 'Hello\n---\nno' });
  assert.deepEqual(parseFrontMatter('---\ndescription:\n---\n'), { body: '' });
});
