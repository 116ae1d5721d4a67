// Keys typed before a question appeared, split into the messages they send: each Enter ends one,
// except inside a pasted block (kept whole, its line breaks as newlines); the keys that edit a line
// and other control characters left out; what has no Enter yet kept as typed for the next prompt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { PASTE_END, PASTE_START, pastedText, splitPastes, takeTypedAhead, typedMessages, typedText } from '../../../src/cli/terminal/typed-ahead.js';

const paste = (text: string) => `${PASTE_START}${text}${PASTE_END}`;

test('each Enter (CR, LF or CRLF) ends a message; the rest waits as typed', () => {
  assert.deepEqual(typedMessages('first\rsecond\r\nthird\nfour'), ['first', 'second', 'third', 'four']);
  assert.deepEqual(typedMessages('done\r'), ['done', '']);
  assert.deepEqual(typedMessages(''), ['']);
});

test('a pasted block stays in its message, newlines kept; one still arriving waits whole', () => {
  assert.deepEqual(typedMessages(`look at ${paste('line 1\r\nline 2\rline 3')} please\rnext`), ['look at line 1\nline 2\nline 3 please', 'next']);
  const open = `say ${PASTE_START}part\rof it`;
  assert.deepEqual(typedMessages(open), [open]);
});

test("arrow keys and control characters are left out of a message's text; a paste keeps its tabs", () => {
  assert.equal(typedText('ab\x1b[Dc\x01\x7f'), 'abc');
  assert.equal(typedText(paste('a\tb\x1b[31m\x07c')), 'a\tbc');
  assert.equal(pastedText('x\r\ny\rz'), 'x\ny\nz');
});

test('keys cut into typed and pasted parts, an unfinished paste marked open, a stray end marker dropped', () => {
  assert.deepEqual(splitPastes(`a${paste('b')}c`), [{ text: 'a', pasted: false }, { text: 'b', pasted: true }, { text: 'c', pasted: false }]);
  assert.deepEqual(splitPastes(`a${PASTE_START}b`), [{ text: 'a', pasted: false }, { text: 'b', pasted: true, open: true }]);
  assert.deepEqual(splitPastes(`x${PASTE_END}y`), [{ text: 'xy', pasted: false }]);
});

test('input that is not a terminal has nothing typed ahead and is not read', async () => {
  const input = new PassThrough();
  input.write('y\n');
  assert.deepEqual(await takeTypedAhead(input as unknown as NodeJS.ReadStream), { keys: '', interrupted: false });
  assert.equal(input.read()?.toString(), 'y\n', 'still there for whoever reads it');
});
