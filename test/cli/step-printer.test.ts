// The step printer on its own, fed events and streamed text the way a run feeds them: every line
// fits the width in columns, wrapped text keeps every word, and narrow screens get short labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { StepPrinter } from '../../src/cli/view/step-printer.js';
import { styleFor } from '../../src/cli/terminal/style.js';
import { displayWidth } from '../../src/format/text.js';

function printer(columns: number, options: { stream?: boolean } = {}) {
  let text = '';
  const out = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
  const style = styleFor(Object.assign(out, { isTTY: false }), { COLUMNS: String(columns), NO_COLOR: '1' });
  return { printer: new StepPrinter(out, style, options), output: () => text };
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

  // How many characters the text functions examine while `fn` runs: every string a regular
  // expression tests (the ASCII fast path's check, format/text.ts isSimple) and every text split
  // into characters (the Unicode path). Counted, not timed: a linear printer examines each
  // character a few times, a quadratic one (a line's break rescanning the rest of the word) once per line.
  function examined(fn: () => void): number {
    let chars = 0;
    const test = RegExp.prototype.test;
    const segment = Intl.Segmenter.prototype.segment;
    RegExp.prototype.test = function (this: RegExp, text: string) {
      chars += String(text).length;
      return test.call(this, text);
    };
    Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, text: string) {
      chars += String(text).length;
      return segment.call(this, text);
    };
    try {
      fn();
    } finally {
      RegExp.prototype.test = test;
      Intl.Segmenter.prototype.segment = segment;
    }
    return chars;
  }

  it('prints a one-megabyte word of model text in linear work, in one piece or many, broken at the width with every character kept', () => {
    const word = 'x'.repeat(1_000_000);
    for (const piece of [word.length, 4096]) {
      const { printer: p, output } = printer(80);
      const work = examined(() => {
        for (let i = 0; i < word.length; i += piece) p.onText(word.slice(i, i + piece));
        p.onEvent(recorded(1, 'model', 'answered'));
      });
      // Quadratic, this examined the rest of the word again at every line (and took many seconds).
      assert.ok(work <= 8 * word.length, `${work} characters examined for a word of ${word.length} in pieces of ${piece}`);
      const lines = output().trimEnd().split('\n');
      for (const line of lines) assert.ok(displayWidth(line) <= 80, `${displayWidth(line)} > 80`);
      const streamed = lines.filter((line) => line.startsWith('      ')).map((line) => line.trim());
      assert.equal(streamed.join(''), word, 'every character of the word is shown once');
    }
  });

  const turn = (text: string, tool?: string) => ({ content: [{ type: 'text', text }, ...(tool ? [{ type: 'tool_use', id: 't1', name: tool, input: {} }] : [])] });

  it("shows a replayed turn's text on one line above its step line, and an answer-only turn's not at all (it is the final answer)", () => {
    const { printer: p, output } = printer(60);
    p.onEvent({ type: 'replayed', position: 1, kind: 'model', description: 'model turn 1', summary: 'calls read_file', originalDurationMs: 5, result: turn(`First I read\n\nthe README \u001b[31mred\u001b[0m, ${'then more '.repeat(10)}`, 'read_file') });
    p.onEvent({ type: 'replayed', position: 2, kind: 'model', description: 'model turn 2', summary: 'answers "Done."', originalDurationMs: 5, result: turn('Done.') });
    const lines = output().trimEnd().split('\n');
    assert.equal(lines.length, 3, output());
    assert.match(lines[0]!, /^ {6}First I read the README \^\[\[31mred\^\[\[0m, then more .*…$/);
    assert.ok(displayWidth(lines[0]!) <= 60);
    assert.match(lines[1]!, /#1 {2}REPLAYED/);
    assert.match(lines[2]!, /#2 {2}REPLAYED .*answers "Done\."/);
  });

  it('off a terminal streams nothing and shows a live turn as a replayed one; on one it knows the answer it streamed', () => {
    const piped = printer(80, { stream: false });
    piped.printer.onText('Let me look.');
    piped.printer.onEvent({ type: 'recorded', position: 1, kind: 'model', description: 'model turn 1', summary: 'calls read_file', durationMs: 5, result: turn('Let me look.', 'read_file') });
    assert.match(piped.output(), /^ {6}Let me look\.\n {2}#1 {2}LIVE/);
    assert.equal(piped.printer.streamedAnswer('Let me look.'), false);

    const tty = printer(80);
    tty.printer.onText('All ');
    tty.printer.onText('done.');
    tty.printer.onEvent({ type: 'recorded', position: 1, kind: 'model', description: 'model turn 1', summary: 'answers "All done."', durationMs: 5, result: turn('All done.') });
    assert.equal(tty.printer.streamedAnswer('All done.'), true);
    assert.equal(tty.printer.streamedAnswer('Something else.'), false);
    tty.printer.onEvent({ type: 'replayed', position: 2, kind: 'model', description: 'model turn 2', summary: 'answers "All done."', originalDurationMs: 5, result: turn('All done.') });
    assert.equal(tty.printer.streamedAnswer('All done.'), false, 'the last step replayed: its answer was not streamed here');
  });
});
