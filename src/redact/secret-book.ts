// The secret book: this machine's map from placeholders to the values found by their shape (a key
// the model wrote into a fixture, a token in a .env file it read). It lives in
// <git common dir>/savepoint/secrets.json, mode 0600: under .git, so it is never in a commit, never
// in the journal and never pushed. Each new value is written (fsynced) before the redacted text that
// names it can reach the journal, so a placeholder in the journal always has its value here.
// Tested in test/redact/secrets.test.ts and test/redact/names.test.ts.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurably } from '../os/durable-file.js';
import type { SecretBook } from './redactor.js';

const FORMAT = 'savepoint/secrets@1';

/** Where a repository's secret book lives, given its git common directory. */
export function secretBookPath(commonDir: string): string {
  return join(commonDir, 'savepoint', 'secrets.json');
}

/** A secret book kept in one file. */
export class FileSecretBook implements SecretBook {
  private readonly path: string;
  private readonly values = new Map<string, string>(); // placeholder -> value
  private readonly placeholders = new Map<string, string>(); // kind NUL value -> placeholder

  constructor(path: string) {
    this.path = path;
    this.load();
  }

  /** The placeholder this value had before, or a new one with a random tag, written to disk first. */
  placeholderFor(kind: string, value: string): string {
    const known = this.placeholders.get(`${kind}\0${value}`);
    if (known) return known;
    this.load(); // another process (a second run in this repository) may have added it
    const again = this.placeholders.get(`${kind}\0${value}`);
    if (again) return again;
    let placeholder: string;
    do placeholder = `[REDACTED:${kind}:${randomBytes(4).toString('hex')}]`;
    while (this.values.has(placeholder));
    this.add(placeholder, kind, value);
    this.save();
    return placeholder;
  }

  /** The value behind a placeholder this book gave out. */
  valueOf(placeholder: string): string | undefined {
    if (!this.values.has(placeholder)) this.load();
    return this.values.get(placeholder);
  }

  /** Takes another machine's placeholder for a value it revealed here, written to disk first, unless either is known already. */
  remember(placeholder: string, kind: string, value: string): boolean {
    this.load();
    const known = this.placeholders.get(`${kind}\0${value}`);
    if (known !== undefined) return known === placeholder;
    if (this.values.has(placeholder)) return false;
    this.add(placeholder, kind, value);
    this.save();
    return true;
  }

  private add(placeholder: string, kind: string, value: string): void {
    this.values.set(placeholder, value);
    this.placeholders.set(`${kind}\0${value}`, placeholder);
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return; // no book yet
    }
    let parsed: { secrets?: Record<string, { kind: string; value: string }> };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return; // a damaged book reveals nothing; the next new value rewrites it with what this process knows
    }
    for (const [placeholder, entry] of Object.entries(parsed.secrets ?? {})) {
      if (typeof entry?.kind === 'string' && typeof entry.value === 'string') this.add(placeholder, entry.kind, entry.value);
    }
  }

  private save(): void {
    const dir = join(this.path, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const secrets: Record<string, { kind: string; value: string }> = {};
    for (const [key, placeholder] of this.placeholders) {
      const [kind, value] = [key.slice(0, key.indexOf('\0')), key.slice(key.indexOf('\0') + 1)];
      secrets[placeholder] = { kind, value };
    }
    writeFileDurably(this.path, `${JSON.stringify({ format: FORMAT, secrets }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(this.path, 0o600);
    // The rename itself must outlive a power cut, as the journal commit naming the value will.
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
