// The live view's countdown while the model service is busy: in place of "waiting for the model",
// the seconds left before savepoint asks again, then back to waiting once they are over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { LiveView } from '../../../src/cli/view/live-view.js';
import { styleFor } from '../../../src/cli/terminal/style.js';

function terminal(): { out: Writable & { isTTY: boolean; columns: number }; text: () => string } {
  let written = '';
  const out = Object.assign(new Writable({ write: (chunk: Buffer | string, _encoding, done) => ((written += chunk.toString()), done()) }), { isTTY: true, columns: 120 });
  return { out, text: () => written };
}

test('a retry wait is counted down on the step line, and the line goes back to waiting for the model after it', async () => {
  const screen = terminal();
  const live = new LiveView(screen.out, styleFor(screen.out, { NO_COLOR: '1' }), true);
  try {
    live.begin('model turn 2', 'model');
    assert.match(screen.text(), /model turn 2 · waiting for the model/);
    live.countdown(1);
    assert.match(screen.text(), /model turn 2 · the service is busy: asking again in 1 s/);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const after = screen.text().slice(screen.text().lastIndexOf('model turn 2'));
    assert.match(after, /waiting for the model/);
  } finally {
    live.close();
  }
});
