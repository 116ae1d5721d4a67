// Keeping secrets out of the journal. Everything written to the branch (entries, commit messages,
// text files in checkpoints) passes through a redactor first. Pure code: the environment and the
// secret book (the local map from placeholders to values) are handed in.
//
// Placeholders, one per value:
//   [REDACTED:DEPLOY_TOKEN]               the value of the environment variable DEPLOY_TOKEN
//   [REDACTED:DEPLOY_TOKEN:base64+1]      one of its base64 forms (see secret-values.ts)
//   [REDACTED:AWS_ACCESS_KEY:3f9a2c1b]    a value found by its shape; the tag is drawn at random the
//                                         first time this machine sees the value, and the book keeps it
// The valve returns what it recorded, so the model sees placeholders live and on replay alike;
// reveal.ts turns them back into values just before an effect runs.
// Tested in test/redact/secrets.test.ts, test/redact/names.test.ts and test/worktree/redactor.test.ts.
import { encodedForms, secretVariables, type IgnoredVariable } from './secret-values.js';

export { MIN_SECRET_LENGTH, SECRET_NAME } from './secret-values.js';

/** Well-known key shapes, found even when they are not in the environment. */
export const KEY_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'PRIVATE_KEY', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g },
  { name: 'ANTHROPIC_KEY', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { name: 'OPENAI_KEY', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/g },
  { name: 'GITHUB_TOKEN', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b/g },
  { name: 'AWS_ACCESS_KEY', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: 'SLACK_TOKEN', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
];

/** The local map from placeholders to the values found by shape (see secret-book.ts). */
export interface SecretBook {
  /** The placeholder for a value of this kind: the one it had before, else a new one, remembered. */
  placeholderFor(kind: string, value: string): string;
  /** The value behind a placeholder this book gave out, if it did. */
  valueOf(placeholder: string): string | undefined;
  /**
   * Takes `placeholder` (another machine's, revealed here) for `value` of `kind`, unless the book
   * already has either; true when the book now gives that placeholder for that value.
   */
  remember?(placeholder: string, kind: string, value: string): boolean;
}

/** Replaces secrets in text and in JSON-like values. */
export interface Redactor {
  /** Redacts one string. */
  text(value: string): string;
  /**
   * Redacts every string inside a JSON-like value (object keys included), returning a copy (the input
   * itself, or the parts of it, where nothing changes).
   */
  value<V>(value: V): V;
  /** The number of secret values it looks for by name (for messages and tests). */
  readonly secretCount: number;
  /** Secret-named variables it leaves alone, and why. */
  readonly ignored: readonly IgnoredVariable[];
}

/** What a redactor needs besides the environment. */
export interface RedactorOptions {
  /** Gives shape-found values distinct, revealable placeholders; without one they become `[REDACTED:KIND]`. */
  book?: SecretBook;
  /** True when a value is the path of an existing file (such a value is not a secret). */
  isFile?: (value: string) => boolean;
}

/** A redactor for the secrets in `env` and the well-known key shapes. */
export function createRedactor(env: NodeJS.ProcessEnv = process.env, options: RedactorOptions = {}): Redactor {
  const { secrets, ignored } = secretVariables(env, options.isFile);
  const replacements: Array<{ find: string; placeholder: string }> = secrets.map(({ name, value }) => ({
    find: value,
    placeholder: `[REDACTED:${name}]`,
  }));
  // Encoded forms after every plain value: a plain value never hides inside an encoded one's placeholder.
  const encoded = secrets.flatMap(({ name, value }) =>
    encodedForms(value).map((form) => ({ find: form.text, placeholder: `[REDACTED:${name}:${form.encoding}]` })),
  );
  replacements.push(...encoded.sort((a, b) => b.find.length - a.find.length));
  const book = options.book;

  const text = (input: string): string => {
    let out = input;
    for (const { find, placeholder } of replacements) if (out.includes(find)) out = out.split(find).join(placeholder);
    for (const { name, pattern } of KEY_PATTERNS) {
      out = out.replace(pattern, (match) => (book ? book.placeholderFor(name, match) : `[REDACTED:${name}]`));
    }
    return out;
  };

  return { text, value: (input) => mapStrings(input, text), secretCount: secrets.length, ignored };
}

/**
 * Applies `fn` to every string inside a JSON-like value (object keys included). Copy-on-write: an
 * array or object none of whose strings changed is handed back as it is, so redacting an entry with
 * no secret in it (nearly every entry) allocates nothing but the walk.
 */
export function mapStrings<V>(input: V, fn: (text: string) => string): V {
  if (typeof input === 'string') return fn(input) as V;
  if (Array.isArray(input)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      const mapped = mapStrings(item, fn);
      if (mapped !== item && !out) out = input.slice(0, i);
      out?.push(mapped);
    }
    return (out ?? input) as V;
  }
  if (input !== null && typeof input === 'object' && !Buffer.isBuffer(input)) {
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(input);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const member = (input as Record<string, unknown>)[key];
      const name = fn(key);
      const mapped = mapStrings(member, fn);
      if ((name !== key || mapped !== member) && !out) {
        out = {};
        for (let j = 0; j < i; j++) out[keys[j]!] = (input as Record<string, unknown>)[keys[j]!];
      }
      if (out) out[name] = mapped;
    }
    return (out ?? input) as V;
  }
  return input;
}
