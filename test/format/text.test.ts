// Cutting text to a length by characters as people see them: ASCII exactly as before (slice and an
// ellipsis), and never half an emoji, a flag or a skin-toned hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  charLength,
  characters,
  chunkColumns,
  cutAfter,
  displayWidth,
  ellipsize,
  fitColumns,
  oneLine,
  shortValue,
  showControls,
  showControlsIn,
  takeChars,
  terminalJson,
  wrapWords,
} from '../../src/format/text.js';

/** True when `text` holds a lone UTF-16 surrogate, i.e. half an emoji. */
const hasLoneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('ellipsize and oneLine', () => {
  it('leave a text that fits alone and cut an ASCII text to max - 1 characters and an ellipsis', () => {
    assert.equal(ellipsize('hello', 5), 'hello');
    assert.equal(ellipsize('hello world', 5), 'hell…');
    assert.equal(oneLine('  read   the\n\tfile  ', 60), 'read the file');
    assert.equal(oneLine('a'.repeat(61), 60), `${'a'.repeat(59)}…`);
    assert.equal(oneLine('a'.repeat(60), 60), 'a'.repeat(60));
    assert.equal(oneLine('hello world', 1), '');
    assert.equal(oneLine('hello world', 0), '');
    assert.equal(oneLine('', 0), '');
  });

  it('match the old UTF-16 slicing byte for byte on ASCII input', () => {
    const old = (text: string, max: number) => {
      const line = text.replace(/\s+/g, ' ').trim();
      return line.length > max ? `${line.slice(0, max - 1)}…` : line;
    };
    const samples = [
      '',
      'x',
      'run_bash "npm test -- --grep login"',
      ' two\n\nlines ',
      'a b '.repeat(40),
      JSON.stringify({ path: 'src/a.ts', n: 3 }),
    ];
    for (const text of samples)
      for (const max of [2, 5, 20, 50, 60, 200]) assert.equal(oneLine(text, max), old(text, max), `${JSON.stringify(text)} at ${max}`);
  });

  it('never split an emoji at the cut point', () => {
    // 9 letters, then emoji: the cut at 10 keeps the letters and one ellipsis, not half an emoji.
    for (const emoji of ['😀', '👍🏽', '🇫🇷', '👩‍💻']) {
      const text = `abcdefghi${emoji}${emoji}tail`;
      const cut = ellipsize(text, 11);
      assert.equal(cut, `abcdefghi${emoji}…`, emoji);
      assert.equal(charLength(cut), 11);
      assert.ok(!hasLoneSurrogate(cut));
      for (let max = 1; max <= 16; max++) {
        const each = oneLine(text, max);
        assert.ok(!hasLoneSurrogate(each), `${emoji} at ${max}`);
        assert.ok(charLength(each) <= max, `${emoji} at ${max}: ${each}`);
        assert.ok(text.startsWith(each.replace(/…$/, '')), `${emoji} at ${max}: a prefix`);
      }
    }
  });

  it('count characters, not UTF-16 units, when deciding whether a text fits', () => {
    const text = '😀'.repeat(5); // 10 UTF-16 units, 5 characters
    assert.equal(text.length, 10);
    assert.equal(ellipsize(text, 5), text);
    assert.equal(ellipsize(text, 4), '😀😀😀…');
    assert.equal(oneLine('naïve café ünïcödé', 10), 'naïve caf…');
  });
});

describe('character helpers', () => {
  it('count and take grapheme clusters', () => {
    assert.equal(charLength('abc'), 3);
    assert.equal(charLength('a👩‍💻b'), 3);
    assert.deepEqual(characters('a🇫🇷b'), ['a', '🇫🇷', 'b']);
    assert.equal(takeChars('a👍🏽b', 2), 'a👍🏽');
    assert.equal(takeChars('abc', 0), '');
    assert.equal(takeChars('abc', 10), 'abc');
  });

  it('cutAfter keeps max characters and then marks the cut', () => {
    assert.equal(cutAfter('abcdef', 3), 'abc…');
    assert.equal(cutAfter('abc', 3), 'abc');
    assert.equal(cutAfter('ab😀😀', 3), 'ab😀…');
  });

  it('shortValue renders any value as one short line', () => {
    assert.equal(shortValue({ b: 1, a: 'x' }), '{"b":1,"a":"x"}');
    assert.equal(shortValue('line one\nline two'), 'line one line two');
    assert.equal(shortValue(undefined), 'undefined');
    assert.equal(shortValue('x'.repeat(100), 10), `${'x'.repeat(9)}…`);
  });
});

describe('terminal columns', () => {
  it('counts emoji, flags and CJK as two columns and the rest as one', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('a😀b'), 4);
    assert.equal(displayWidth('👩‍💻'), 2);
    assert.equal(displayWidth('🇫🇷'), 2);
    assert.equal(displayWidth('日本'), 4);
    assert.equal(displayWidth('é→·✕'), 4);
  });

  it('measures Latin letters, punctuation, arrows and box drawing by their length as the segmenter would', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const ranges: Array<[number, number]> = [
      [0x20, 0x7e],
      [0xa0, 0x2ff],
      [0x2010, 0x2027],
      [0x2030, 0x205e],
      [0x2190, 0x21ff],
      [0x2500, 0x259f],
    ];
    const chars = ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i)));
    // Every one a character of its own, one column wide, beside any other: one long text of them all.
    const text = chars.join('');
    assert.equal([...segmenter.segment(text)].length, chars.length);
    assert.equal(charLength(text), chars.length);
    assert.equal(displayWidth(text), chars.length);
    for (const char of chars) assert.equal(displayWidth(`${char}${char}`), 2, `U+${char.codePointAt(0)!.toString(16)}`);
    assert.equal(fitColumns('── attempt 1 · live from #1 → done ───', 12), '── attempt …');
    // One combining mark or emoji among them, and the text is measured as the segmenter says.
    assert.equal(displayWidth('e\u0301·→'), 3);
    assert.equal(displayWidth('→😀'), 3);
  });

  it('fitColumns cuts to the columns, never half an emoji, and is oneLine on ASCII', () => {
    assert.equal(fitColumns('ab😀cd', 4), 'ab…');
    assert.equal(fitColumns('ab😀cd', 5), 'ab😀…');
    assert.equal(fitColumns('ab😀', 4), 'ab😀');
    assert.equal(fitColumns('日本語のテキスト', 7), '日本語…');
    for (let max = 0; max <= 12; max++) assert.ok(displayWidth(fitColumns('x👍🏽y🇫🇷z日本w', max)) <= max, `at ${max}`);
    assert.equal(fitColumns(' read  the\nfile ', 60), oneLine(' read  the\nfile ', 60));
    assert.equal(takeChars('ab😀cd', 3, 'columns'), 'ab');
  });

  it('wrapWords keeps lines within the width, by characters or by columns', () => {
    assert.deepEqual(wrapWords('one two three four', 9), ['one two', 'three', 'four']);
    assert.deepEqual(wrapWords('😀😀 😀😀 😀😀', 9, 'columns'), ['😀😀 😀😀', '😀😀']);
    assert.deepEqual(wrapWords('para one\npara two', 40), ['para one', 'para two']);
    assert.deepEqual(wrapWords('x'.repeat(12), 5), ['xxxx…']);
  });
});

describe('chunkColumns', () => {
  it('cuts a word into full pieces of the width and a shorter last one, never splitting a wide character or an emoji', () => {
    assert.deepEqual(chunkColumns('abcdefg', 3), ['abc', 'def', 'g']);
    assert.deepEqual(chunkColumns('', 3), []);
    assert.deepEqual(chunkColumns('日本日本日', 4), ['日本', '日本', '日']);
    assert.deepEqual(chunkColumns('a👩‍💻b日', 3), ['a👩‍💻', 'b日']);
    // A character wider than the width still makes progress, one per piece.
    assert.deepEqual(chunkColumns('日日', 1), ['日', '日']);
  });
});

describe('showControls', () => {
  it('makes every character a terminal acts on visible, and keeps tab, newline and plain text', () => {
    assert.equal(showControls('a\tb\nc'), 'a\tb\nc');
    assert.equal(showControls('\x1b]52;c;eA==\x07'), '^[]52;c;eA==^G');
    assert.equal(showControls('x\r\x7f\u009b2J\u202eé😀'), 'x^M^?<U+009B>2J<U+202E>é😀');
  });

  it('reaches strings inside objects and arrays, keys too, and leaves the original alone', () => {
    const original = { task: 'a\x1b[2J', steps: [{ summary: '\x07' }], ['k\x1b']: 1, n: 3 };
    assert.deepEqual(showControlsIn(original), { task: 'a^[[2J', steps: [{ summary: '^G' }], ['k^[']: 1, n: 3 });
    assert.equal(original.task, 'a\x1b[2J');
  });

  it('a cut never keeps half of a control character made visible, at any length, by characters or columns', () => {
    const shown = showControls('ab\x1b]0;t\x07\u009b2J\x1e\x1b😀\u202ez');
    assert.equal(shown, 'ab^[]0;t^G<U+009B>2J^^^[😀<U+202E>z');
    // Every place a cut may end: the start of each visible control, or between two of them.
    const whole = (kept: string) => /^(?:[^^<]|\^[@A-Z[\\\]^_?]|<U\+[0-9A-F]{4}>|<(?!U\+))*$/u.test(kept);
    for (let max = 0; max <= shown.length + 2; max++) {
      for (const unit of ['chars', 'columns'] as const) {
        const taken = takeChars(shown, max, unit);
        assert.ok(whole(taken), `takeChars ${max} ${unit}: ${taken}`);
        const cut = ellipsize(shown, max, unit);
        assert.ok(whole(cut.replace(/…$/, '')), `ellipsize ${max} ${unit}: ${cut}`);
      }
      const ascii = showControls('abc\x1b[1A\x1b[2K\x1e\x1bdef');
      assert.ok(whole(ellipsize(ascii, max)), `ascii ellipsize ${max}: ${ellipsize(ascii, max)}`);
      assert.ok(whole(takeChars(ascii, max)), `ascii takeChars ${max}: ${takeChars(ascii, max)}`);
    }
    assert.equal(ellipsize('x^[y', 3), 'x…');
    assert.equal(ellipsize('^^^[abc', 4), '^^…');
  });

  it('terminalJson escapes what JSON.stringify leaves raw (DEL, C1, bidirectional, line separators), and parses back the same', () => {
    const value = { final: 'a\x1b]0;t\x07\x7f\u009b2J\u202e\u2028z', n: 1 };
    const json = terminalJson(value, 2);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(json, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u202e]/);
    assert.match(json, /\\u001b\]0;t\\u0007\\u007f\\u009b2J\\u202e\\u2028z/);
    assert.deepEqual(JSON.parse(json), value);
  });
});

describe('long text, segmented a window at a time', () => {
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const whole = (text: string) => Array.from(segmenter.segment(text), (s) => s.segment);

  it("gives the segmenter's own characters across many windows: flags, skin tones, families, combining marks, CRLF", () => {
    const parts = ['漢', 'a', '👍🏽', '🇫🇷', '🇩🇪', 'e\u0301', '\r\n', '👨‍👩‍👧', 'x', '\u0301'.repeat(3)];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let trial = 0; trial < 40; trial++) {
      let text = '';
      const count = 500 + Math.floor(next() * 2500);
      for (let i = 0; i < count; i++) text += parts[Math.floor(next() * parts.length)];
      const expected = whole(text);
      assert.deepEqual(characters(text), expected, `trial ${trial}`);
      assert.equal(charLength(text), expected.length);
      assert.equal(chunkColumns(text, 7).join(''), text);
    }
  });

  it('keeps a flag whole where a window would end between its halves, and a cluster longer than a window', () => {
    // 1,023 units of CJK, then a flag: its first regional indicator's surrogate pair straddles unit 1,024.
    const flagAtEdge = `${'漢'.repeat(1023)}🇩🇪${'漢'.repeat(10)}`;
    assert.deepEqual(characters(flagAtEdge), whole(flagAtEdge));
    assert.equal(displayWidth(flagAtEdge), 2 * 1034);
    const longCluster = `a${'\u0301'.repeat(5000)}b`;
    assert.deepEqual(characters(longCluster), ['a' + '\u0301'.repeat(5000), 'b']);
    const wideWord = '漢'.repeat(80_000);
    assert.equal(displayWidth(wideWord), 160_000);
    assert.equal(chunkColumns(wideWord, 80).length, 2000);
  });
});
