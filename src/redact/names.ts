// Secrets in file names. A checkpoint's trees are recorded in the journal, so a name holding a
// secret (a file named after a token, a directory named after a key) is redacted like a file's
// content: `notes-<token>.txt` is recorded as `notes-[REDACTED:DEPLOY_TOKEN].txt~3f9a2c1b`. The user's
// files keep their real names; only the journal's trees hold the recorded ones. Pure code: the
// redactor and the secret book are handed in.
//
// The `~` tag keeps recorded names distinct and says the name was redacted: two names that redact
// to the same text (two keys of one shape without a book, a file literally named after a
// placeholder beside the one it stands for) get different tags. With a secret book the tag is the
// book's for the real name (kind FILE_NAME: drawn at random the first time, kept in the book on this
// machine), so it tells nothing about the secret to whoever reads the journal, and this machine maps
// it back to the real name exactly. Without one it is a hash of the real name.
import { createHash } from 'node:crypto';
import type { SecretBook } from './redactor.js';

/** The secret book's kind for the real names behind recorded ones. */
export const NAME_KIND = 'FILE_NAME';
// Linux refuses longer names; a recorded name over it would make the checkpoint unrestorable.
const MAX_NAME_BYTES = 255;
const TAG = /^(.*)~([0-9a-f]{8})$/s;
const MARK = '[REDACTED:';

/**
 * Maps one real path component to the name the journal records for it. `adopt`, when there, is told
 * a recorded name a restore revealed (another machine's tag): from then on the real name is
 * recorded under it, so the next checkpoint does not show the file renamed.
 */
export type NameRecorder = ((name: string) => string) & { adopt?: (recorded: string, real: string) => void };

/** What a restore can put back of a recorded path: the real path, or the placeholders nobody here knows. */
export type NameRevealer = (text: string) => { text: string; unknown: string[] };

/**
 * The recorder of names for `redactText` (a redactor's text) and `book`: a name with no secret (and
 * no placeholder-looking text) is recorded as it is; any other gets its redacted text and a tag.
 * Answers are remembered: the same names come back at every checkpoint.
 */
export function createNameRecorder(redactText: (text: string) => string, book?: SecretBook): NameRecorder {
  const known = new Map<string, string>();
  const record: NameRecorder = (name) => {
    let recorded = known.get(name);
    if (recorded !== undefined) return recorded;
    const redacted = redactText(name);
    recorded = redacted === name && !name.includes(MARK) ? name : tagged(redacted, tagOf(name, book));
    known.set(name, recorded);
    return recorded;
  };
  record.adopt = (recorded, real) => {
    const tag = TAG.exec(recorded)?.[2];
    // Only a name this machine would redact too, recorded with nothing it would redact (a forged
    // one could hold a value in clear), and only a tag its book takes for it.
    if (!tag || !book?.remember || known.get(real) === recorded || redactText(real) === real || redactText(recorded) !== recorded) return;
    if (book.remember(`[REDACTED:${NAME_KIND}:${tag}]`, NAME_KIND, real)) known.set(real, recorded);
  };
  return record;
}

/** The recorded form of a slash-separated path, component by component. */
export function recordPath(path: string, record: NameRecorder): string {
  return path.includes('/') ? path.split('/').map(record).join('/') : record(path);
}

/**
 * The real path behind recorded `path`, or undefined when one of its names holds a secret this
 * machine does not know (neither the book's tag nor the placeholders can be revealed). A name that
 * is not a recorded one (no placeholder, or no tag) is its own real name.
 */
export function revealPath(path: string, reveal: NameRevealer | undefined): string | undefined {
  return revealPathHow(path, reveal)?.path;
}

/**
 * revealPath, and whether the path is exact: every name in it was recorded as it is or revealed by
 * its tag. Revealed from the placeholders alone it is a guess: two names that redact alike (a
 * token's name beside a file literally named after its placeholder) reveal to the same path.
 */
export function revealPathHow(path: string, reveal: NameRevealer | undefined): { path: string; exact: boolean } | undefined {
  if (!path.includes(MARK)) return { path, exact: true };
  const names: string[] = [];
  let exact = true;
  for (const name of path.split('/')) {
    const real = revealName(name, reveal);
    if (real === undefined) return undefined;
    names.push(real.name);
    exact &&= real.exact;
  }
  return { path: names.join('/'), exact };
}

/**
 * Where in the working tree the file at recorded `path` would be, as far as its names can be
 * revealed: the real directory `dir` up to the first name that cannot, and whether that name was
 * the file's own (`file`: the file is directly in `dir`) or a directory's (anywhere below `dir`).
 */
export function revealedPlace(path: string, reveal: NameRevealer | undefined): { dir: string; file: boolean } {
  const names = path.split('/');
  const real: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = revealName(names[i]!, reveal)?.name;
    if (name === undefined || name.includes('/')) return { dir: real.join('/'), file: i === names.length - 1 };
    real.push(name);
  }
  return { dir: real.slice(0, -1).join('/'), file: true };
}

function revealName(name: string, reveal: NameRevealer | undefined): { name: string; exact: boolean } | undefined {
  const match = TAG.exec(name);
  if (!match || !match[1]!.includes(MARK)) return { name, exact: true };
  if (!reveal) return undefined;
  const byTag = reveal(`[REDACTED:${NAME_KIND}:${match[2]}]`);
  if (byTag.unknown.length === 0) return { name: byTag.text, exact: true };
  const byText = reveal(match[1]!);
  return byText.unknown.length === 0 ? { name: byText.text, exact: false } : undefined;
}

function tagOf(name: string, book: SecretBook | undefined): string {
  if (book) {
    const placeholder = book.placeholderFor(NAME_KIND, name);
    const tag = /:([0-9a-f]{8})\]$/.exec(placeholder)?.[1];
    if (tag) return tag;
  }
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

// `redacted~tag`, the redacted text shortened (never inside a character) to fit a file name.
function tagged(redacted: string, tag: string): string {
  const suffix = `~${tag}`;
  let text = redacted;
  while (Buffer.byteLength(text + suffix) > MAX_NAME_BYTES) text = [...text].slice(0, -1).join('');
  // Cut before its first placeholder, it would read as an ordinary name: the tag alone then says it.
  if (!text.includes(MARK)) text = `[REDACTED:${NAME_KIND}]`;
  return text + suffix;
}
