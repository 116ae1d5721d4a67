// A run's first lines on the terminal: one line when it fits; else the model on a line of its own,
// and an id or model longer than the terminal broken after a "-" or "/" (never cut), control
// characters shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { breakAfter, headerLines } from '../../../src/cli/view/run-header.js';
import { styleFor } from '../../../src/cli/terminal/style.js';

const plain = (columns: number) => styleFor({ isTTY: false, columns } as never, {});

test('one line when it fits, the model on its own line when not', () => {
  assert.deepEqual(headerLines('fix-1a2b', 'claude-a', plain(80)), ['savepoint  run fix-1a2b  ·  model claude-a']);
  assert.deepEqual(headerLines('fix-the-login-bug-1a2b', 'claude-sonnet-4-5', plain(40)), ['savepoint  run fix-the-login-bug-1a2b', '  model claude-sonnet-4-5']);
});

test('a long id breaks after a dash, each piece under the first, and joins back to the whole id', () => {
  const id = 'add-a-retry-to-every-request-the-client-sends-to-the-api-3f9a';
  const lines = headerLines(id, 'claude-a', plain(40));
  assert.ok(lines.every((line) => line.length <= 40), lines.join('\n'));
  const pieces = lines.slice(0, -1).map((line, i) => (i === 0 ? line.slice('savepoint  run '.length) : line.trimStart()));
  assert.equal(pieces.join(''), id);
  assert.ok(pieces.slice(0, -1).every((piece) => piece.endsWith('-')));
  assert.equal(lines.at(-1), '  model claude-a');
});

test('control characters in an id are shown, not sent to the terminal', () => {
  assert.doesNotMatch(headerLines('evil\x1b[2J-1a2b', 'm', plain(80)).join(''), /\x1b/);
});

test('breakAfter cuts at the width when no break is in reach, and never leaves a stub', () => {
  assert.deepEqual(breakAfter('abcdefghijklmnopqrstuvwxyz', 10), ['abcdefghij', 'klmnopqrst', 'uvwxyz']);
  assert.deepEqual(breakAfter('a-bcdefghijklmnop', 10), ['a-bcdefghi', 'jklmnop'], 'a dash in the first half is no place to break');
  assert.deepEqual(breakAfter('org/model-name', 4), ['org/mode', 'l-name'], 'the room is at least 8 columns');
  assert.deepEqual(breakAfter('vendor/model-name', 10), ['vendor/', 'model-name']);
  assert.deepEqual(breakAfter('short', 10), ['short']);
});
