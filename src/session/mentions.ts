// `@path` mentions in what the person types, as Claude Code reads them: `explain @src/add.js` sends
// the message and, after it, the file's text in a block that names the path. A mention is a word
// that starts with "@" and names a file that exists (relative to the current directory, or
// absolute); anything else stays plain text (an email address, `@types/node` where there is no such
// folder, a directory). A file that exists but is one no tool may read is refused as read_file
// refuses it (path-utils.ts: outside the repository after symbolic links, inside .git; or denied by
// a read rule), and nothing is sent. Each file is cut, as a read_file result is, at 50 KB.
import { closeSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { PermissionCheck } from '../agent/tool-call.js';
import { MentionRefusedError, PathOutsideRepositoryError } from '../errors/index.js';
import { resolveInRepo, specialFileKind, toRepoRelative } from '../tools/path-utils.js';
import { MODEL_OUTPUT_MAX_BYTES } from '../tools/truncate.js';

/** Where mentions resolve and who may read them. */
export interface MentionContext {
  /** The repository root: every mentioned file must lie inside it. */
  root: string;
  /** Relative mentions resolve from here (the current directory). */
  cwd: string;
  /** The rules in force: a `read_file` deny rule refuses the mention. */
  permission?: PermissionCheck;
}

// Characters that end a sentence after a mention ("look at @src/add.js.") and are not its path.
const TRAILING = /[.,;:!?)\]}'"`]+$/;

/** `text` with the text of each file it mentions appended (in the order first mentioned), or `text` itself when it mentions none. */
export function expandMentions(text: string, context: MentionContext): string {
  const blocks: string[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(/(?:^|(?<=\s))@(\S+)/g)) {
    const mention = mentionedPath(match[1]!, context.cwd);
    if (!mention) continue;
    const file = readMentioned(mention, context);
    if (!file || seen.has(file.path)) continue;
    seen.add(file.path);
    blocks.push(file.block);
  }
  return blocks.length ? `${text}\n\n${blocks.join('\n\n')}` : text;
}

// The path a mention names, as typed (a sentence's last mark dropped when the path does not go
// on with it), when there is something there; undefined for plain text.
function mentionedPath(word: string, cwd: string): string | undefined {
  for (const candidate of [word, word.replace(TRAILING, '')]) {
    if (candidate && exists(resolve(cwd, candidate))) return candidate;
  }
  return undefined;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

// The block for the file `mention` names, or undefined when it is a directory (plain text); a
// file no tool may read throws MentionRefusedError.
function readMentioned(mention: string, { root, cwd, permission }: MentionContext): { path: string; block: string } | undefined {
  let real: string;
  try {
    real = resolveInRepo(root, resolve(cwd, mention));
  } catch (error) {
    // As read_file refuses it: the same check, the same words.
    if (error instanceof PathOutsideRepositoryError)
      throw new MentionRefusedError(mention, `${error.message.charAt(0).toLowerCase()}${error.message.slice(1).replace(/\.$/, '')}`);
    throw error;
  }
  const path = toRepoRelative(root, real);
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(real);
  } catch {
    return undefined; // a link to nothing inside the repository: no file, plain text
  }
  if (stats.isDirectory()) return undefined;
  const special = specialFileKind(stats);
  if (special) throw new MentionRefusedError(mention, `${path} is ${special}, not a regular file`);
  const denied = permission?.('read_file', { path });
  if (denied?.verdict === 'deny')
    throw new MentionRefusedError(
      mention,
      `reading ${path} is denied by the rule "${denied.rule}"${'source' in denied && denied.source ? ` (${String(denied.source)})` : ''}`,
    );
  const head = readHead(real, MODEL_OUTPUT_MAX_BYTES);
  if (head.includes(0))
    throw new MentionRefusedError(
      mention,
      `${path} is a binary file (${stats.size} bytes); a mention brings text only, as read_file shows it`,
    );
  const cut = stats.size > head.length;
  const text = cutToWholeCharacters(head, cut).toString('utf8');
  const note = cut ? `\n[cut at ${head.length} of its ${stats.size} bytes: read_file ${path} with an offset reads the rest]` : '';
  return { path, block: `<file path="${path}">\n${text}${text.endsWith('\n') || !text ? '' : '\n'}</file>${note}` };
}

// The first `max` bytes of a file (all of a shorter one).
function readHead(file: string, max: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(max);
    let read = 0;
    for (let n; read < max && (n = readSync(fd, buffer, read, max - read, read)) > 0;) read += n;
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

// A cut text ends at a whole character, not inside one's UTF-8 bytes.
function cutToWholeCharacters(bytes: Buffer, cut: boolean): Buffer {
  if (!cut) return bytes;
  let end = bytes.length;
  while (end > 0 && end > bytes.length - 4 && (bytes[end - 1]! & 0xc0) === 0x80) end--;
  return end > 0 && bytes[end - 1]! >= 0xc0 ? bytes.subarray(0, end - 1) : bytes.subarray(0, end);
}
