// What the model is sent for what the person typed: a custom command's text, then the files its
// `@path` mentions bring; undefined when that is what was typed (nothing to record beside it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomCommandError } from '../../src/errors/index.js';
import { expandMessage } from '../../src/session/message-expansion.js';
import type { CustomCommand } from '../../src/settings/index.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function setUp() {
  const root = scratch.dir('savepoint-expansion-');
  mkdirSync(join(root, '.savepoint', 'commands'), { recursive: true });
  writeFileSync(join(root, '.savepoint', 'commands', 'review.md'), 'Review @notes.md for $1.\n');
  writeFileSync(join(root, 'notes.md'), 'the notes\n');
  const command = (untrusted = false): CustomCommand => ({ name: 'review', file: join(root, '.savepoint', 'commands', 'review.md'), source: 'project', description: '', ...(untrusted ? { untrusted } : {}) });
  return { root, command };
}

test('a custom command becomes its text, and the mentions in that text bring their files', () => {
  const { root, command } = setUp();
  assert.equal(expandMessage('  /review typos  ', { commands: [command()], mentions: true }, { root, cwd: root }), 'Review @notes.md for typos.\n\n<file path="notes.md">\nthe notes\n</file>');
  assert.equal(expandMessage('/review typos', { commands: [command()] }, { root, cwd: root }), 'Review @notes.md for typos.', 'mentions off: the text only');
});

test('nothing to expand is undefined: no expansion asked, plain text, an unknown "/word" (a path), no mention', () => {
  const { root, command } = setUp();
  assert.equal(expandMessage('/review x', undefined, { root, cwd: root }), undefined);
  assert.equal(expandMessage('fix it', { commands: [command()], mentions: true }, { root, cwd: root }), undefined);
  assert.equal(expandMessage('/src/app.ts is broken', { commands: [command()], mentions: true }, { root, cwd: root }), undefined);
  assert.equal(expandMessage('/other thing', { commands: [command()] }, { root, cwd: root }), undefined);
});

test("an untrusted repository's command is refused before anything is sent", () => {
  const { root, command } = setUp();
  assert.throws(() => expandMessage('/review x', { commands: [command(true)] }, { root, cwd: root }), (error: unknown) => error instanceof CustomCommandError && error.code === 'ECOMMAND' && /not trusted/.test(error.message));
});
