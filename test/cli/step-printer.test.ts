// The step printer on its own, fed events and streamed text the way a run feeds them: every line
// fits the width in columns, wrapped text keeps every word, and narrow screens get short labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { StepPrinter } from '../../src/cli/view/step-printer.js';
import { styleFor } from '../../src/cli/terminal/style.js';
import { displayWidth } from '../../src/format/text.js';

function printer(columns: number) {
  let text = '';
  const out = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
  const style = styleFor(Object.assign(out, { isTTY: false }), { COLUMNS: String(columns), NO_COLOR: '1' });
  return { printer: new StepPrinter(out, style), output: () => text };
}

const recorded = (position: number, description: string, summary: string, resolution?: string) =>
  ({ type: 'recorded', position, kind: 'run_bash', description, summary, durationMs: 1234, result: null, ...(resolution ? { resolution } : {}) }) as const;

describe('StepPrinter', () => {
  const TEXT = 'Streaming text arrives in pieces 👩‍💻 that split words and emoji anywhere, and a URL https://example.com/' + 'a'.repeat(90) + ' too.';

  for (const columns of [60, 200]) {
    it(`wraps streamed text and cuts step lines to ${columns} columns`, () => {
      const { printer: p, output } = printer(columns);
      // Pieces of 7 UTF-16 units: they cut words, and the emoji's surrogate pairs, anywhere.
      for (let i = 0; i < TEXT.length; i += 7) p.onText(TEXT.slice(i, i + 7));
      p.onEvent(recorded(12, `run_bash "echo ${'é'.repeat(60)}"`, `exit 0: ${'日本'.repeat(40)}`, 'in-flight-reported'));
      const lines = output().trimEnd().split('\n');
      for (const line of lines) assert.ok(displayWidth(line) <= columns, `${displayWidth(line)} > ${columns}: ${line}`);
      const streamed = lines.filter((line) => line.startsWith('      ')).map((line) => line.trim());
      assert.equal(streamed.join(' ').replace(/ /g, ''), TEXT.replace(/ /g, ''), 'every character of the text is shown once');
      const step = lines.at(-1)!;
      // Answered without running (it was in flight at a crash): never labelled LIVE.
      assert.match(step, columns >= 100 ? /^ #12 {2}NOT RUN \(was in flight\) +run_bash/ : /^ #12 {2}NOT RUN {3}run_bash/);
      assert.match(step, /· 1\.2 s$/);
    });
  }

  it('prints a one-megabyte word of model text in linear time, in one piece or many, broken at the width with every character kept', () => {
    const word = 'x'.repeat(1_000_000);
    for (const piece of [word.length, 4096]) {
      const { printer: p, output } = printer(80);
      const started = performance.now();
      for (let i = 0; i < word.length; i += piece) p.onText(word.slice(i, i + piece));
      p.onEvent(recorded(1, 'model', 'answered'));
      const ms = performance.now() - started;
      // Quadratic, this took many seconds (a whole line's break rescanned the rest of the word).
      assert.ok(ms < 3000, `${ms.toFixed(0)} ms for a 1 MB word in pieces of ${piece}`);
      const lines = output().trimEnd().split('\n');
      for (const line of lines) assert.ok(displayWidth(line) <= 80, `${displayWidth(line)} > 80`);
      const streamed = lines.filter((line) => line.startsWith('      ')).map((line) => line.trim());
      assert.equal(streamed.join(''), word, 'every character of the word is shown once');
    }
  });
});
