// Text for people: one-line renderings cut to a length. Lengths count characters as people see
// them (grapheme clusters: an emoji with its skin tone or a flag is one), never UTF-16 units, so
// a cut never splits an emoji or leaves half a surrogate pair. Pure: no I/O, no imports from src/.

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The characters of `text` as people see them (grapheme clusters). */
export function characters(text: string): string[] {
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** How many characters (grapheme clusters) `text` has. */
export function charLength(text: string): number {
  if (isAscii(text)) return text.length;
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** The first `max` characters of `text` (all of it when it is shorter), never splitting one. */
export function takeChars(text: string, max: number): string {
  if (max <= 0) return '';
  if (text.length <= max) return text; // a UTF-16 length at most max means at most max characters
  if (isAscii(text)) return text.slice(0, max);
  let out = '';
  let n = 0;
  for (const { segment } of segmenter.segment(text)) {
    if (n++ >= max) break;
    out += segment;
  }
  return out;
}

/**
 * `text` cut to at most `max` characters, the last of which is `…` when anything was cut.
 * With no room for a character and the ellipsis (`max` of 1 or less), a cut text becomes ''.
 */
export function ellipsize(text: string, max: number): string {
  if (text.length <= max) return text; // a UTF-16 length at most max means at most max characters
  if (isAscii(text)) return max <= 1 ? '' : `${text.slice(0, max - 1)}…`;
  const head: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    head.push(segment);
    if (head.length > max) break;
  }
  if (head.length <= max) return text;
  return max <= 1 ? '' : `${head.slice(0, max - 1).join('')}…`;
}

/** The first `max` characters of `text`, then `…` when there was more (at most `max` + 1 in all). */
export function cutAfter(text: string, max: number): string {
  const kept = takeChars(text, max);
  return kept.length < text.length ? `${kept}…` : text;
}

/** `text` on one line (whitespace runs become one space, ends trimmed), cut to `max` characters with `…`. */
export function oneLine(text: string, max: number): string {
  return ellipsize(text.replace(/\s+/g, ' ').trim(), max);
}

/** Any value as one short line: a string as it is, anything else as JSON; see `oneLine`. */
export function shortValue(value: unknown, max = 60): string {
  return oneLine(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), max);
}

/**
 * `text` word-wrapped to lines of at most `width` characters, keeping its own line breaks; a word
 * longer than a whole line is cut with `…`.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      if (line && charLength(line) + 1 + charLength(word) > width) {
        lines.push(line);
        line = '';
      }
      line = line ? `${line} ${word}` : ellipsize(word, width);
    }
    lines.push(line);
  }
  return lines;
}

function isAscii(text: string): boolean {
  return !/[^\x00-\x7f]/.test(text);
}
