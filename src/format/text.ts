// Text for people: one-line renderings cut to a length. Lengths count characters as people see
// them (grapheme clusters: an emoji with its skin tone or a flag is one), never UTF-16 units, so
// a cut never splits an emoji or leaves half a surrogate pair. For a terminal, the same cuts can
// count columns instead: an emoji or a CJK character takes two. Pure: no I/O, no imports from src/.

// Made on first use: creating it loads ICU's segmentation data, 35-125 ms of every command's
// start-up when made here, and most text is ASCII, which never needs it.
let graphemes: Intl.Segmenter | undefined;

// The text a segmenter is handed at once. V8's segments of one string cost more per character the
// longer the string (a 20,000-character CJK word 0.3 s, 40,000 1.4 s, 80,000 about 45 s), so long
// text is segmented a window at a time. A cluster's end depends only on the code point after it
// (and on those before it, from a boundary), so a window's clusters but its last are whole.
const WINDOW = 1024;

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;

/**
 * The characters (grapheme clusters) of `text` with their offsets, as Intl.Segmenter gives them,
 * a window at a time: each window starts at a boundary, and its last cluster (which the window's
 * end may have cut) is left to start the next. A cluster longer than a window widens it.
 */
function* segments(text: string): Generator<{ segment: string; index: number }> {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let start = 0;
  let window = WINDOW;
  while (start < text.length) {
    let end = Math.min(text.length, start + window);
    // Never between the halves of a surrogate pair: the cluster before would end at the half.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end++;
    let last: { segment: string; index: number } | undefined;
    let count = 0;
    for (const { segment, index } of graphemes.segment(text.slice(start, end))) {
      if (last) yield last;
      last = { segment, index: start + index };
      count++;
    }
    if (end === text.length) {
      if (last) yield last;
      return;
    }
    if (count < 2) {
      window *= 2; // one cluster filled the window: look further
      continue;
    }
    start = last!.index;
    window = WINDOW;
  }
}

/** What a length counts: characters (grapheme clusters), or terminal columns. */
export type TextUnit = 'chars' | 'columns';

// Characters a terminal draws two columns wide: emoji shown as emoji, regional-indicator flags,
// and the East Asian wide and fullwidth blocks.
const WIDE =
  /^(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F|\p{Regional_Indicator}|[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{20000}-\u{3FFFD}])/u;

/** How many terminal columns one character (grapheme cluster) takes: 2 for wide ones, else 1. */
export function charWidth(char: string): number {
  return WIDE.test(char) ? 2 : 1;
}

/** How many terminal columns `text` takes on one line. */
export function displayWidth(text: string): number {
  if (isSimple(text)) return text.length;
  let n = 0;
  for (const { segment } of segments(text)) n += charWidth(segment);
  return n;
}

/** The characters of `text` as people see them (grapheme clusters). */
export function characters(text: string): string[] {
  return Array.from(segments(text), (s) => s.segment);
}

/** How many characters (grapheme clusters) `text` has. */
export function charLength(text: string): number {
  if (isSimple(text)) return text.length;
  let n = 0;
  for (const _ of segments(text)) n++;
  return n;
}

/**
 * The first `max` characters (or columns) of `text`, all of it when it is shorter, never splitting
 * one, nor a control character showControls made visible (`^[`, `<U+009B>`).
 */
export function takeChars(text: string, max: number, unit: TextUnit = 'chars'): string {
  if (max <= 0) return '';
  if (isSimple(text)) return text.slice(0, wholeShown(text, max));
  if (unit === 'chars' && text.length <= max) return text; // at most max UTF-16 units: at most max characters
  let used = 0;
  for (const { segment, index } of segments(text)) {
    used += unit === 'chars' ? 1 : charWidth(segment);
    if (used > max) return text.slice(0, wholeShown(text, index));
  }
  return text;
}

/**
 * `text` cut to at most `max` characters (or columns), the last of which is `…` when anything was
 * cut. With no room for a character and the ellipsis (`max` of 1 or less), a cut text becomes ''.
 * A cut never splits a character, nor a control character showControls made visible.
 */
export function ellipsize(text: string, max: number, unit: TextUnit = 'chars'): string {
  if (isSimple(text)) return text.length <= max ? text : max <= 1 ? '' : `${text.slice(0, wholeShown(text, max - 1))}…`;
  if (unit === 'chars' && text.length <= max) return text; // at most max UTF-16 units: at most max characters
  let used = 0;
  let keep = 0; // where the cut goes: the longest start that leaves room for the ellipsis
  for (const { segment, index } of segments(text)) {
    used += unit === 'chars' ? 1 : charWidth(segment);
    if (used > max) return max <= 1 ? '' : `${text.slice(0, wholeShown(text, keep))}…`;
    if (used <= max - 1) keep = index + segment.length;
  }
  return text;
}

// Where a cut of `text` at `end` goes so that it keeps no half of a control character that
// showControls made visible: before a `^` whose letter would be cut off, or before a `<U+XXXX>`
// that would lose its end. (A `^` or `<U+` typed as text is cut the same way: a cut anyway.)
function wholeShown(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end;
  // A run of carets pairs up from its start (`^^` is one character, U+001E): an odd run before a
  // caret's letter would keep half of the last pair.
  let carets = 0;
  while (carets < end && text[end - 1 - carets] === '^') carets++;
  if (carets % 2 === 1 && /[@A-Z[\\\]^_?]/.test(text[end]!)) return end - 1;
  const open = text.lastIndexOf('<U+', end - 1);
  if (open >= 0 && open > end - 8 && open + 8 > end && /^<U\+[0-9A-F]{4}>/.test(text.slice(open, open + 8))) return open;
  return end;
}

/** The first `max` characters of `text`, then `…` when there was more (at most `max` + 1 in all). */
export function cutAfter(text: string, max: number): string {
  const kept = takeChars(text, max);
  return kept.length < text.length ? `${kept}…` : text;
}

/** `text` on one line (whitespace runs become one space, ends trimmed), cut to `max` characters with `…`. */
export function oneLine(text: string, max: number, unit: TextUnit = 'chars'): string {
  return ellipsize(text.replace(/\s+/g, ' ').trim(), max, unit);
}

/** `text` on one line cut to fit `columns` terminal columns with `…`: `oneLine` by columns. */
export function fitColumns(text: string, columns: number): string {
  return oneLine(text, columns, 'columns');
}

/** Any value as one short line: a string as it is, anything else as JSON; see `oneLine`. */
export function shortValue(value: unknown, max = 60): string {
  return oneLine(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), max);
}

/**
 * `text` word-wrapped to lines of at most `width` characters (or columns), keeping its own line
 * breaks; a word longer than a whole line is cut with `…`.
 */
export function wrapWords(text: string, width: number, unit: TextUnit = 'chars'): string[] {
  const size = unit === 'chars' ? charLength : displayWidth;
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      if (line && size(line) + 1 + size(word) > width) {
        lines.push(line);
        line = '';
      }
      line = line ? `${line} ${word}` : ellipsize(word, width, unit);
    }
    lines.push(line);
  }
  return lines;
}

/**
 * `text` cut into pieces of at most `width` columns (at least one character each), in one pass, so
 * a megabyte-long word costs the same per character as a short one; every piece but the last is
 * full. '' gives no pieces.
 */
export function chunkColumns(text: string, width: number): string[] {
  const room = Math.max(1, width);
  const pieces: string[] = [];
  if (isSimple(text)) {
    for (let i = 0; i < text.length; i += room) pieces.push(text.slice(i, i + room));
    return pieces;
  }
  let start = 0;
  let used = 0;
  for (const { segment, index } of segments(text)) {
    const w = charWidth(segment);
    if (used > 0 && used + w > room) {
      pieces.push(text.slice(start, index));
      start = index;
      used = 0;
    }
    used += w;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

// Text in which every UTF-16 unit is a character of its own, one column wide: ASCII, the Latin
// letters before the combining marks (U+0000–U+02FF), the dashes, quotes and bullets of General
// Punctuation without its joiners and marks (U+2010–U+2027, U+2030–U+205E), arrows, box drawing
// and block elements (U+2190–U+21FF, U+2500–U+259F), which savepoint's own lines use ('·', '–',
// '→', '─', '▇'). It is measured and cut by its length, without the segmenter, which costs some
// 40 ms to make (test/format/text.test.ts holds every such character to the segmenter's count).
const SIMPLE = /^[\x00-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2500-\u259f]*$/;

function isSimple(text: string): boolean {
  return SIMPLE.test(text);
}

// Characters a terminal acts on instead of drawing: C0 controls but tab and newline, DEL, the C1
// controls (U+0080–U+009F: some terminals take U+009B as an escape), and the bidirectional
// overrides and isolates, which reorder what is drawn around them. Also a lone U+DC80–U+DCFF: a
// byte of a file name that is not UTF-8 (os/path-bytes.ts), drawn as `\xff`.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]|(?<![\ud800-\udbff])[\udc80-\udcff]/g;
// The same characters, without the global flag (whose lastIndex would make test() stateful).
// eslint-disable-next-line no-control-regex
const HAS_CONTROLS = new RegExp(CONTROLS.source);

/**
 * `text` with every character a terminal would act on made visible instead: ESC as `^[`, the other
 * C0 controls in caret notation (`^M`, `^G`), DEL as `^?`, C1 and bidirectional controls as
 * `<U+009B>`, a raw byte of a name that is not UTF-8 as `\xff`. Tab and newline stay. For every
 * string from outside (model text, command output, file names, fields of a fetched journal) on its
 * way to a terminal; a cut made after it can never split an escape sequence, because none is left.
 */
export function showControls(text: string): string {
  // Most text has none: testing first spares building a copy of it.
  return HAS_CONTROLS.test(text) ? text.replace(CONTROLS, controlName) : text;
}

function controlName(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  if (code >= 0xdc80 && code <= 0xdcff) return `\\x${(code - 0xdc00).toString(16).padStart(2, '0')}`;
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `value` with showControls applied to every string in it, keys too (a copy; `value` is left as it is). */
export function showControlsIn<T>(value: T): T {
  if (typeof value === 'string') return showControls(value) as T;
  if (Array.isArray(value)) return value.map((item) => showControlsIn(item)) as T;
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [showControlsIn(k), showControlsIn(v)])) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    // A loop, not Object.fromEntries(Object.entries(...)): a long run's timeline has some 20 fields
    // in each of thousands of steps, and the arrays of pairs were most of the time of `log`.
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) copy[showControls(key)] = showControlsIn((value as Record<string, unknown>)[key]);
    return copy as T;
  }
  return value;
}

// What JSON.stringify leaves as it is and a terminal may act on: DEL, the C1 controls, the
// bidirectional marks, overrides and isolates, and the line and paragraph separators.
const JSON_RAW = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `value` as JSON (JSON.stringify with `space`) that is safe to print on a terminal: besides the C0
 * controls JSON escapes itself, DEL, C1 controls and bidirectional controls are written as `\uXXXX`
 * escapes, so a script reads the same value and a terminal is never driven by it.
 */
export function terminalJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(JSON_RAW, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
