// Placeholders back into values, just before an effect runs: a tool call runs with what the model
// wrote, even when what it wrote is a placeholder it copied from redacted text. Pure code: the
// environment and the secret book are handed in. A value this machine cannot know stops the step
// with UnknownSecretError, before anything runs.
// Tested in test/redact/secrets.test.ts and test/redact/names.test.ts.
import { UnknownSecretError } from '../errors/index.js';
import { mapStrings, type SecretBook } from './redactor.js';
import { encodedForms, secretVariables } from './secret-values.js';

/** Every placeholder a redactor writes: `[REDACTED:NAME]`, `[REDACTED:NAME:base64+1]`, `[REDACTED:KIND:3f9a2c1b]`. */
export const PLACEHOLDER = /\[REDACTED:([A-Za-z0-9_.-]+)(?::([A-Za-z0-9+]+))?\]/g;

// The tag of a value found by its shape (see SecretBook).
const BOOK_TAG = /^[0-9a-f]{8}$/;

/** Replaces placeholders with their values. */
export interface Revealer {
  /** One string; throws UnknownSecretError for a placeholder whose value is not known here. */
  text(value: string): string;
  /** Every string inside a JSON-like value, returning a copy (the input itself when nothing changes). */
  value<V>(value: V): V;
  /** What it can reveal in one string, leaving the rest: the text and the placeholders left in it. */
  partial(value: string): { text: string; unknown: string[] };
}

/** A revealer for placeholders made from `env` (by variable name) and `book` (by tag). */
export function createRevealer(env: NodeJS.ProcessEnv, book?: SecretBook, isFile?: (value: string) => boolean): Revealer {
  const byName = new Map(secretVariables(env, isFile).secrets.map(({ name, value }) => [name, value]));
  const valueOf = (placeholder: string, name: string, tag: string | undefined): string => {
    if (tag !== undefined && BOOK_TAG.test(tag)) {
      const known = book?.valueOf(placeholder);
      if (known === undefined) throw new UnknownSecretError(placeholder);
      return known;
    }
    const value = byName.get(name);
    if (value === undefined) throw new UnknownSecretError(placeholder, name);
    if (tag === undefined) return value;
    const form = encodedForms(value).find((f) => f.encoding === tag);
    if (!form) throw new UnknownSecretError(placeholder, name);
    return form.text;
  };
  const text = (input: string): string =>
    input.includes('[REDACTED:') ? input.replace(PLACEHOLDER, (whole, name: string, tag?: string) => valueOf(whole, name, tag)) : input;
  const value = <V>(input: V): V => (JSON.stringify(input)?.includes('[REDACTED:') ? mapStrings(input, text) : input);
  const partial = (input: string) => {
    const unknown: string[] = [];
    const out = input.replace(PLACEHOLDER, (whole, name: string, tag?: string) => {
      try {
        return valueOf(whole, name, tag);
      } catch {
        unknown.push(whole);
        return whole;
      }
    });
    return { text: out, unknown };
  };
  return { text, value, partial };
}
