// SessionPrompt.keepTypedAhead (src/cli/interactive/prompt.ts) on a stand-in terminal: what was
// typed ahead of a turn's question becomes the lines the next prompts answer with, in order, the
// line without Enter waits to be finished, and a Ctrl-C among the keys is the turn's Ctrl-C
// (SIGINT to this process) with what was typed ahead dropped; a block pasted (bracketed) is one
// message, its newlines kept. The real terminal's side is
// test/cli/interactive-typeahead.test.ts (tmux).
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { SessionPrompt } from '../../src/cli/interactive/prompt.js';
import { fakeTerminal } from '../helpers/fake-terminal.js';

// Resolves once every signal this process sent itself before the call has been handled: it sends
// itself SIGUSR2 and waits for that. The kernel delivers pending signals lowest number first and
// Node runs their handlers in the order they came, so a SIGINT the prompt sent is handled before.
// (A signal's listener does not keep Node running: an interval does, until the signal is in.)
function signalsHandled(): Promise<void> {
  return new Promise((resolve) => {
    const alive = setInterval(() => {}, 1000);
    process.once('SIGUSR2', () => {
      clearInterval(alive);
      resolve();
    });
    process.kill(process.pid, 'SIGUSR2');
  });
}

test('keys typed ahead of a question become the next prompts\' lines, in order; the unfinished one waits; the terminal is left as it was', async () => {
  const input = fakeTerminal();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const prompt = new SessionPrompt({ input, output });
  input.write('second message\r/cost\n');
  input.write('half a li');
  await prompt.keepTypedAhead();
  assert.deepEqual(input.modes, [true, false], 'read raw, then back to the mode it was in');
  assert.ok(input.isPaused(), 'nothing reads the terminal after it');
  assert.deepEqual(await prompt.read('› '), { line: 'second message' });
  assert.deepEqual(await prompt.read('› '), { line: '/cost' });
  assert.match(shown, /› second message\n› \/cost\n/);
  // The next prompt opens with the unfinished line, to be finished.
  const third = prompt.read('› ');
  input.write('ne\r');
  assert.deepEqual(await third, { line: 'half a line' });
});

test('a Ctrl-C among the keys typed ahead is SIGINT to this process, and drops what was typed ahead', async () => {
  const input = fakeTerminal();
  const output = new PassThrough();
  output.resume();
  const prompt = new SessionPrompt({ input, output });
  let interrupted = 0;
  const onSigint = () => interrupted++;
  process.on('SIGINT', onSigint);
  try {
    input.write('a message\rhalf\x03');
    await prompt.keepTypedAhead();
    await signalsHandled();
    assert.equal(interrupted, 1);
  } finally {
    process.off('SIGINT', onSigint);
  }
  const next = prompt.read('› ');
  input.write('typed after\r');
  assert.deepEqual(await next, { line: 'typed after' }, 'nothing typed ahead is left');
});

test('a block pasted among the keys typed ahead (bracketed) is one message, its newlines kept, a Ctrl-C in it text; one still arriving waits whole', async () => {
  const input = fakeTerminal();
  const output = new PassThrough();
  output.resume();
  const prompt = new SessionPrompt({ input, output });
  input.write('look at this: \x1b[200~line one\x03\rline two\r\x1b[201~\rnext\r');
  input.write('\x1b[200~half\rof a paste');
  let interrupted = 0;
  const onSigint = () => interrupted++;
  process.on('SIGINT', onSigint);
  try {
    await prompt.keepTypedAhead();
    await signalsHandled();
  } finally {
    process.off('SIGINT', onSigint);
  }
  assert.equal(interrupted, 0, 'a pasted Ctrl-C character is not Ctrl-C pressed');
  assert.deepEqual(await prompt.read('› '), { line: 'look at this: line one\nline two\n' });
  assert.deepEqual(await prompt.read('› '), { line: 'next' });
  // The block still arriving is at the prompt, whole; its end and an Enter send it as one message.
  const third = prompt.read('› ');
  input.write('\x1b[201~\r');
  assert.deepEqual(await third, { line: 'half\nof a paste' });
});

test('at the prompt, a pasted block is one message sent by the Enter after it, and joins the history once', async () => {
  const input = fakeTerminal();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const prompt = new SessionPrompt({ input, output });
  const answer = prompt.read('› ');
  input.write('fix: \x1b[200~first\rsecond\rthird\x1b[201~');
  input.write(' please\r');
  assert.deepEqual(await answer, { line: 'fix: first\nsecond\nthird please' });
  assert.ok(shown.includes('\x1b[?2004h'), 'the prompt asks the terminal for bracketed paste');
  assert.equal(prompt.history[0], 'fix: first\nsecond\nthird please', 'the history holds the message once, whole');
  assert.equal(prompt.history.length, 1);
});
