// read_file: a file's text with line numbers, as `cat -n` prints it, so the model can point at lines.
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { plural } from '../format/numbers.js';
import { defineTool, errorMessage, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import { resolveInRepo, specialFileKind, toRepoRelative } from './path-utils.js';
import type { Tool } from './types.js';

/** Lines shown when the model gives no limit: whole files up to this size, a window beyond. */
export const DEFAULT_READ_LIMIT = 2000;

/** The input of a read_file call. */
export interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

const description = `Reads a file from the repository and returns its text with line numbers, as \`cat -n\` prints them (the number, a tab, then the line).
- path is relative to the repository root (an absolute path inside the repository works too).
- Reads up to ${DEFAULT_READ_LIMIT} lines from the start by default. For a longer file, read on with offset (the 1-based line number to start at) and limit (how many lines).
- Read a file before editing it: edit_file needs its exact text. The line-number prefix is not part of the file.
- Use list_files to list a directory and search to find text across files.`;

/** The read_file tool over the repository at `root`. */
export function createReadFileTool(root: string): Tool<ReadFileInput> {
  return defineTool<ReadFileInput>({
    name: 'read_file',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file to read, relative to the repository root.' },
        offset: { type: 'integer', minimum: 1, description: 'The line number to start reading at (1-based). Only needed for long files.' },
        limit: { type: 'integer', minimum: 1, description: `How many lines to read (default ${DEFAULT_READ_LIMIT}).` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    describe: (input) => `read_file ${asText(input.path)}`,
    async run({ path, offset, limit }) {
      const file = resolveInRepo(root, path);
      const shown = toRepoRelative(root, file);
      let bytes: Buffer;
      try {
        bytes = await readRegularFile(file);
      } catch (error) {
        if (error instanceof NotRegularFile) return toolError(`${shown} is ${error.kind}, not a regular file; read_file reads regular files only.`, `error: ${error.kind}`);
        return toolError(errorMessage(error, shown));
      }
      // A NUL byte is how git, grep and diff tell binary from text too.
      if (bytes.subarray(0, 8000).includes(0)) {
        return toolError(`${shown} is a binary file (${plural(bytes.length, 'byte')}); read_file only shows text.`, 'error: binary file');
      }
      return toolOk(...numberLines(bytes.toString('utf8'), offset ?? 1, limit ?? DEFAULT_READ_LIMIT, shown));
    },
  });
}

class NotRegularFile extends Error {
  constructor(readonly kind: string) {
    super(kind);
  }
}

// The whole file, refused when it is a FIFO, a device or a socket: checked before opening (opening a
// device can act on it), then opened without blocking and checked again on the open descriptor, as a
// FIFO swapped in between would otherwise wait forever for a writer (and again at every resume, since
// reads re-run). A directory gets EISDIR's message.
async function readRegularFile(file: string): Promise<Buffer> {
  const before = specialFileKind(await stat(file));
  if (before) throw new NotRegularFile(before);
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const kind = specialFileKind(await handle.stat());
    if (kind) throw new NotRegularFile(kind);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

// The numbered window of `text` starting at line `first`, and its summary.
function numberLines(text: string, first: number, limit: number, shown: string): [string, string] {
  if (text === '') return [`(${shown} is empty)`, 'empty file'];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  const total = lines.length;
  if (first > total) {
    return [`(${shown} has ${plural(total, 'line')}; nothing to show from line ${first})`, `past the end (${plural(total, 'line')})`];
  }
  const window = lines.slice(first - 1, first - 1 + limit);
  const last = first + window.length - 1;
  const body = window.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join('\n');
  if (first === 1 && last === total) return [body, plural(total, 'line')];
  const more = last < total ? `; read on with offset ${last + 1}` : '';
  return [`${body}\n\n[lines ${first}-${last} of ${total}${more}]`, `lines ${first}-${last} of ${total}`];
}
