// What the person typed in an interactive session and did not send, kept when the session ends: the
// line at the prompt, the lines typed ahead during a turn and not yet answered, the line begun
// without Enter. The product's rule is that no word typed is dropped without being saved first and
// the person told where. One file per ended session, under this worktree's git dir, beside the
// session's other per-worktree state (`.git/savepoint/`, never in a commit, never pushed):
// `.git/savepoint/unsent/<when>-<pid>.json`, written whole and fsynced. The next session in that
// worktree says so in one line and puts the texts in its prompt's history (the up arrow brings them
// back): never sent by itself, nor pre-filled where an Enter meant for something else would send it.
// Tested in test/cli/interactive-unsent.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Repository } from '../../git/repository.js';
import { writeFileDurably, unlinkQuietly } from '../../os/durable-file.js';
import { cutAfter, showControls } from '../../format/text.js';
import { userConfigDir } from '../../settings/index.js';

const FORMAT = 'savepoint/unsent@1';

/** The most text kept from one session, in UTF-8 bytes (a pasted log may be large); the rest is cut, and the person told. */
export const UNSENT_LIMIT_BYTES = 256 * 1024;

/** How many files of unsent text are kept; older ones, already told, are removed. */
export const UNSENT_FILES_KEPT = 50;

// The marker of the newest file a session has told of: the files named after it are new.
const TOLD = 'told';

/** Unsent text as one session's end kept it. */
export interface KeptUnsent {
  /** The file it is in. */
  file: string;
  /** The texts, oldest first, as typed (pasted blocks with their newlines). */
  texts: string[];
  /** Set when the texts were cut to UNSENT_LIMIT_BYTES: how many bytes were typed. */
  typedBytes?: number;
}

/** Where a session in `repository` keeps unsent text: its worktree's git dir, else (no repository) the user's config folder. */
export function unsentDir(repository: Repository | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return repository ? join(repository.gitdir, 'savepoint', 'unsent') : join(userConfigDir(env), 'unsent');
}

/**
 * Writes `texts` (the blank ones left out) to `file` in `dir` (a new name when `file` is undefined),
 * whole and fsynced, cut to UNSENT_LIMIT_BYTES; undefined when there is nothing to keep. The same
 * session may call it again with more: the file is rewritten with all of it.
 */
export function keepUnsent(dir: string, texts: string[], file?: string, endedBy?: string): KeptUnsent | undefined {
  const typed = texts.filter((text) => text.trim() !== '');
  if (!typed.length) return undefined;
  const typedBytes = typed.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  const kept = typedBytes > UNSENT_LIMIT_BYTES ? cut(typed, UNSENT_LIMIT_BYTES) : typed;
  const path = file ?? join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.json`);
  const record = {
    format: FORMAT,
    at: new Date().toISOString(),
    ...(endedBy ? { endedBy } : {}),
    cwd: process.cwd(),
    texts: kept,
    ...(kept === typed ? {} : { cut: { keptBytes: UNSENT_LIMIT_BYTES, typedBytes } }),
  };
  writeFileDurably(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return { file: path, texts: kept, ...(kept === typed ? {} : { typedBytes }) };
}

// The first `limit` bytes of the texts, in order; the text that crosses the limit is cut at a
// character, and those after it are left out.
function cut(texts: string[], limit: number): string[] {
  const kept: string[] = [];
  let left = limit;
  for (const text of texts) {
    const bytes = Buffer.from(text);
    if (bytes.length <= left) {
      kept.push(text);
      left -= bytes.length;
      continue;
    }
    // A cut inside a character leaves a replacement character at the end: dropped.
    const head = bytes
      .subarray(0, left)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    if (head) kept.push(head);
    break;
  }
  return kept;
}

/**
 * The unsent text earlier sessions kept in `dir` that no session has told of yet, oldest first,
 * marked as told now (the files stay: a session that ends again keeps its own). Files that cannot
 * be read are skipped, never removed. Old told files past UNSENT_FILES_KEPT are removed.
 */
export function takeUnsent(dir: string): KeptUnsent[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((name) => /^\d{4}-.*\.json$/.test(name))
      .sort();
  } catch {
    return []; // no session kept any
  }
  let told = '';
  try {
    told = readFileSync(join(dir, TOLD), 'utf8').trim();
  } catch {
    // none told yet
  }
  const fresh = names.filter((name) => name > told);
  const found: KeptUnsent[] = [];
  for (const name of fresh) {
    const kept = readKept(join(dir, name));
    if (kept) found.push(kept);
  }
  try {
    if (fresh.length) writeFileDurably(join(dir, TOLD), `${fresh.at(-1)}\n`);
  } catch {
    // A folder that cannot be written (read-only): the next session tells of them again.
  }
  for (const name of names.slice(0, Math.max(0, names.length - UNSENT_FILES_KEPT)))
    if (name <= (fresh.at(-1) ?? told)) unlinkQuietly(join(dir, name));
  return found;
}

function readKept(file: string): KeptUnsent | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown; texts?: unknown; cut?: { typedBytes?: unknown } };
    if (record.format !== FORMAT || !Array.isArray(record.texts)) return undefined;
    const texts = record.texts.filter((text): text is string => typeof text === 'string' && text.trim() !== '');
    if (!texts.length) return undefined;
    const typedBytes = typeof record.cut?.typedBytes === 'number' ? record.cut.typedBytes : undefined;
    return { file, texts, ...(typedBytes ? { typedBytes } : {}) };
  } catch {
    return undefined;
  }
}

/** The line said where a session's unsent text was kept, as the session ends. */
export function keptLine(kept: KeptUnsent): string {
  return `Not sent, kept: ${what(kept.texts)}${cutWords(kept)} in ${shownPath(kept.file)} (the next session here brings ${kept.texts.length > 1 ? 'them' : 'it'} back with the up arrow).`;
}

/** The line the next session says of the unsent text earlier sessions kept, whose texts it put in the history. */
export function restoredLine(found: KeptUnsent[]): string {
  const texts = found.flatMap((kept) => kept.texts);
  const files = found.map((kept) => shownPath(kept.file));
  const where = files.length === 1 ? files[0]! : `${files.length} files, the last ${files.at(-1)!}`;
  const cutNote = found.some((kept) => kept.typedBytes)
    ? ` (cut: only the first ${UNSENT_LIMIT_BYTES / 1024} KB of a session is kept)`
    : '';
  return `Not sent when ${found.length > 1 ? `${found.length} earlier sessions` : 'the last session'} here ended: ${what(texts)}, kept in ${where}${cutNote}; the up arrow brings ${texts.length > 1 ? 'them' : 'it'} back.`;
}

// "fix the te…" or "fix the te…" and 2 more messages: what was typed, shown, never interpreted.
function what(texts: string[]): string {
  // Controls made visible first: the cut never splits a character, nor a `^[` it shows.
  const preview = cutAfter(showControls(texts[0]!.trim()), 40);
  return `"${preview}"${texts.length > 1 ? ` and ${texts.length - 1} more message${texts.length > 2 ? 's' : ''}` : ''}`;
}

function cutWords(kept: KeptUnsent): string {
  return kept.typedBytes ? ` (cut to the first ${UNSENT_LIMIT_BYTES / 1024} KB of ${Math.ceil(kept.typedBytes / 1024)} KB)` : '';
}

// The file as the person can open it from here: relative when it is under the current folder.
function shownPath(file: string): string {
  const near = relative(process.cwd(), file);
  return showControls(near.startsWith('..') ? file : near);
}
