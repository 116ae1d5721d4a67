// The live view of a running step, in-process on a fake terminal: the block (a spinner line, a
// command's last output lines) is erased before whatever the run prints and drawn again after, never
// in the middle of a line; a command's control characters are made visible; off a terminal there is
// no block at all. test/cli/live-view.test.ts shows it in a real pty.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { LiveView, OUTPUT_LINES } from '../../../src/cli/view/live-view.js';
import { styleFor } from '../../../src/cli/terminal/style.js';

// A terminal that keeps every write, in order.
function terminal() {
  const writes: string[] = [];
  const real = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        writes.push(chunk.toString());
        callback();
      },
    }),
    { isTTY: true, columns: 100 },
  );
  const style = styleFor(real, { NO_COLOR: '1', COLUMNS: '100' });
  return { real, style, writes };
}
const ERASE = /^\r(\x1b\[\d+A)?\x1b\[J$/;
const write = (stream: Writable, text: string) => new Promise<void>((done) => stream.write(text, () => done()));

describe('the live view', () => {
  it('is nothing off a terminal: the run prints to the stream itself', () => {
    const { real, style, writes } = terminal();
    const view = new LiveView(real, style, false);
    assert.equal(view.out, real);
    view.begin('npm test', 'run_bash');
    view.output('line\n');
    view.close();
    assert.deepEqual(writes, []);
  });

  it("draws the step and the command's last lines, a progress bar's last state, controls made visible", () => {
    const { real, style, writes } = terminal();
    const view = new LiveView(real, style, true);
    try {
      view.begin('npm \x1b[2Jtest', 'run_bash');
      assert.match(writes.at(-1)!, /npm \^\[\[2Jtest · running · /);
      view.output('first\nsecond\nprogress 10%\rprogress 100%\nclip \x1b]52;c;ZXZpbA==\x07\nhalf a li');
      view.output('ne');
      const block = writes.at(-1)!;
      const shown = block.split('\n').filter((line) => line.includes('│'));
      assert.equal(shown.length, OUTPUT_LINES);
      assert.deepEqual(shown.map((line) => line.split('│ ')[1]), ['second', 'progress 100%', 'clip ^[]52;c;ZXZpbA==^G', 'half a line']);
      assert.ok(!writes.join('').includes('\x1b]52'), 'no escape of the command reaches the terminal');
      view.countdown(30);
      assert.match(writes.at(-1)!, /the service is busy: asking again in \d+ s/);
    } finally {
      view.close();
    }
    assert.match(writes.at(-1)!, ERASE, 'closing takes the block away');
  });

  it('erases the block before what the run prints and draws it again after, but never in the middle of a line', async () => {
    const { real, style, writes } = terminal();
    const view = new LiveView(real, style, true);
    try {
      view.begin('the model', 'model');
      assert.match(writes.at(-1)!, /waiting for the model/);
      await write(view.out, '● step 1 recorded\n');
      const at = writes.indexOf('● step 1 recorded\n');
      assert.match(writes[at - 1]!, ERASE);
      assert.match(writes[at + 1]!, /waiting for the model/);
      const before = writes.length;
      await write(view.out, 'streamed text without an end');
      const since = writes.slice(before);
      assert.equal(since.length, 2);
      assert.match(since[0]!, ERASE);
      assert.equal(since[1], 'streamed text without an end', 'mid-line, the block waits for the line to end');
      await write(view.out, ' ... and its end\n');
      assert.match(writes.at(-1)!, /waiting for the model/);

      view.pause();
      assert.match(writes.at(-1)!, ERASE);
      const paused = writes.length;
      view.output('x\n');
      assert.equal(writes.length, paused, 'nothing is drawn while a question is asked');
      view.resume();
      assert.match(writes.at(-1)!, /waiting for the model/);
      view.end();
      assert.match(writes.at(-1)!, ERASE);
      await write(view.out, 'after the step\n');
      assert.equal(writes.at(-1), 'after the step\n');
    } finally {
      view.close();
    }
  });
});
