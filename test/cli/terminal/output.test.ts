// A reader that goes away (`savepoint log | head`): a command that drives a run keeps going and
// stops writing to the closed stream, with no error and no stack trace; the exit status a reading
// command ends with there is git's, 141.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { CLOSED_PIPE_EXIT, guardOutput, onClosedPipe } from '../../../src/cli/terminal/output.js';

test('with discard, a closed stream swallows later writes and still calls their callbacks', async () => {
  const reached: string[] = [];
  const stream = new Writable({ write: (chunk, _encoding, done) => (reached.push(String(chunk)), done()) });
  onClosedPipe('discard');
  guardOutput([stream]);
  stream.write('before');
  stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  await new Promise<void>((resolve) => stream.write('after', () => resolve()));
  assert.equal(stream.write('again', 'utf8'), true);
  assert.deepEqual(reached, ['before']);
  assert.equal(CLOSED_PIPE_EXIT, 128 + 13, '128 + SIGPIPE');
});
