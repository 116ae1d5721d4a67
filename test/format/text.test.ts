// Cutting text to a length by characters as people see them: ASCII exactly as before (slice and an
// ellipsis), and never half an emoji, a flag or a skin-toned hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { charLength, characters, cutAfter, ellipsize, oneLine, shortValue, takeChars } from '../../src/format/text.js';

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
    const samples = ['', 'x', 'run_bash "npm test -- --grep login"', ' two\n\nlines ', 'a b '.repeat(40), JSON.stringify({ path: 'src/a.ts', n: 3 })];
    for (const text of samples) for (const max of [2, 5, 20, 50, 60, 200]) assert.equal(oneLine(text, max), old(text, max), `${JSON.stringify(text)} at ${max}`);
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
