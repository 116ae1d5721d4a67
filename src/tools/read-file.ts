// read_file: a file's text with line numbers, as `cat -n` prints it, so the model can point at lines.
// The file is read in blocks, never whole: only the lines asked for are kept, at most what one tool
// result shows the model (50 KB), so a log of any size is read in bounded memory; the lines before
// and after them are only counted.
import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { formatBytes, plural } from '../format/numbers.js';
import { defineTool, errorMessage, READS_AT_ONCE, toolError, toolOk } from './define-tool.js';
import { asText, MODEL_OUTPUT_MAX_BYTES } from './truncate.js';
import { resolveInRepo, specialFileKind, toRepoRelative } from './path-utils.js';
import type { Tool, ToolResult } from './types.js';
import { imageMediaType, MAX_IMAGE_BYTES } from './image-type.js';
import { hashObject } from '../git/git-object.js';

/** Lines shown when the model gives no limit: whole files up to this size, a window beyond. */
export const DEFAULT_READ_LIMIT = 2000;

/** The input of a read_file call. */
export interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

const description = `Reads a file from the repository and returns its text with line numbers, as \`cat -n\` prints them (the number, a tab, then the line). An image (PNG, JPEG, GIF or WebP, at most ${MAX_IMAGE_BYTES / 1024 / 1024} MB) is returned as the image itself.
- path is relative to the repository root (an absolute path inside the repository works too).
- Reads up to ${DEFAULT_READ_LIMIT} lines from the start by default. For a longer file, read on with offset (the 1-based line number to start at) and limit (how many lines).
- One read returns at most ${MODEL_OUTPUT_MAX_BYTES / 1024} KB of numbered lines: a longer window ends early and says where to read on. Files of any size can be read this way.
- Read a file before editing it: edit_file needs its exact text. The line-number prefix is not part of the file.
- Use list_files to list a directory and search to find text across files.`;

/** The read_file tool over the repository at `root`. */
export function createReadFileTool(root: string): Tool<ReadFileInput> {
  return defineTool<ReadFileInput>({
    name: 'read_file',
    maxConcurrent: READS_AT_ONCE, // a read: beside the other reads of its answer
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
      let handle: FileHandle;
      try {
        handle = await openRegularFile(file);
      } catch (error) {
        if (error instanceof NotRegularFile)
          return toolError(`${shown} is ${error.kind}, not a regular file; read_file reads regular files only.`, `error: ${error.kind}`);
        return toolError(errorMessage(error, shown));
      }
      try {
        const size = (await handle.stat()).size;
        // A NUL byte is how git, grep and diff tell binary from text too.
        const head = Buffer.alloc(Math.min(size, 8000));
        const { bytesRead } = await handle.read(head, 0, head.length, 0);
        const mediaType = imageMediaType(head.subarray(0, bytesRead));
        if (mediaType) return await readImage(handle, size, mediaType, shown);
        if (head.subarray(0, bytesRead).includes(0)) {
          return toolError(`${shown} is a binary file (${plural(size, 'byte')}); read_file only shows text.`, 'error: binary file');
        }
        const window = await readLineWindow(handle, offset ?? 1, limit ?? DEFAULT_READ_LIMIT, BODY_MAX_BYTES);
        return toolOk(...describeWindow(window, offset ?? 1, shown));
      } catch (error) {
        return toolError(errorMessage(error, shown));
      } finally {
        await handle.close();
      }
    },
  });
}

// An image (by its first bytes), whole, for the model's image block: the output is a line saying
// what it is (what step lines, `show` and the text of the result read), the bytes ride beside it.
async function readImage(handle: FileHandle, size: number, mediaType: string, shown: string): Promise<ToolResult> {
  const what = `${mediaType.slice('image/'.length).toUpperCase()} image`;
  if (size > MAX_IMAGE_BYTES) {
    return toolError(
      `${shown} is a ${what} of ${formatBytes(size)}; read_file shows images of at most ${formatBytes(MAX_IMAGE_BYTES)}.`,
      `error: image over ${formatBytes(MAX_IMAGE_BYTES)}`,
    );
  }
  const bytes = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const { bytesRead } = await handle.read(bytes, read, size - read, read);
    if (bytesRead === 0) break; // shrunk while read: what was there
    read += bytesRead;
  }
  const data = bytes.subarray(0, read);
  return {
    output: `[image: ${shown}, ${mediaType}, ${formatBytes(read)}]`,
    isError: false,
    summary: `${what}, ${formatBytes(read)}`,
    image: { mediaType, blob: hashObject('blob', data), bytes: read },
    imageBytes: data,
  };
}

// The numbered lines' share of a result: the rest of the 50 KB a model is shown whole is for the
// line saying where to read on.
const BODY_MAX_BYTES = MODEL_OUTPUT_MAX_BYTES - 400;

// How much of the file one read takes into memory at a time.
const BLOCK_BYTES = 1024 * 1024;

class NotRegularFile extends Error {
  constructor(readonly kind: string) {
    super(kind);
  }
}

// The file opened for reading, refused when it is a FIFO, a device or a socket: checked before
// opening (opening a device can act on it), then opened without blocking and checked again on the
// open descriptor, as a FIFO swapped in between would otherwise wait forever for a writer (and again
// at every resume, since reads re-run). A directory gets EISDIR's message (at its first read).
async function openRegularFile(file: string): Promise<FileHandle> {
  const before = specialFileKind(await stat(file));
  if (before) throw new NotRegularFile(before);
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const kind = specialFileKind(await handle.stat());
    if (kind) throw new NotRegularFile(kind);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The lines a read found: those of its window (numbered from `first`), and how the file goes on. */
interface LineWindow {
  /** The window's lines, decoded, `cat -n` numbering not yet added. */
  lines: string[];
  /** The file's lines in all (a last line without a newline counts). */
  total: number;
  /** The file's size in bytes, as read. */
  bytes: number;
  /** The window ended before `limit` because its numbered lines reached the byte budget. */
  full: boolean;
  /** The window's one line was longer than the whole budget: its length in bytes, of which its start is shown. */
  clippedLineBytes?: number;
}

// Reads `handle` block by block, keeping lines `first` .. `first + limit - 1` while their numbered
// form fits in `maxBytes`, and counting every line. Memory: one block and the window.
async function readLineWindow(handle: FileHandle, first: number, limit: number, maxBytes: number): Promise<LineWindow> {
  const lines: string[] = [];
  let used = 0;
  let full = false;
  let clippedLineBytes: number | undefined;
  let line = 1; // the number of the line the next byte belongs to
  let parts: Buffer[] = []; // the part of the current line kept so far (only in the window)
  let kept = 0;
  let lineBytes = 0; // the current line's length so far
  let pending = false; // bytes seen since the last newline
  let bytes = 0;
  const inWindow = () => !full && line >= first && line < first + limit;
  const endLine = () => {
    if (inWindow()) {
      const text = Buffer.concat(parts).toString('utf8');
      const size = Buffer.byteLength(numbered(line, text)) + 1;
      if (used + size <= maxBytes) {
        lines.push(text);
        used += size;
      } else if (lines.length === 0) {
        // Alone over the budget (minified code, a log without newlines): its start is shown, cut
        // once decoded (each byte that is not UTF-8 became three, U+FFFD).
        lines.push(cutUtf8(Buffer.from(text), maxBytes - 16).toString('utf8'));
        clippedLineBytes = lineBytes;
        full = true;
      } else {
        full = true;
      }
    }
    parts = [];
    kept = 0;
    lineBytes = 0;
    pending = false;
    line++;
  };
  const block = Buffer.alloc(BLOCK_BYTES);
  for (;;) {
    const { bytesRead } = await handle.read(block, 0, block.length, bytes);
    if (bytesRead === 0) break;
    bytes += bytesRead;
    const data = block.subarray(0, bytesRead);
    let at = 0;
    while (at < data.length) {
      const newline = data.indexOf(0x0a, at);
      if (!inWindow()) {
        // Before or after the window the lines are only counted (most of a big file: kept quick).
        if (newline === -1) {
          pending = true;
          break;
        }
        line++;
        pending = false;
        at = newline + 1;
        continue;
      }
      const end = newline === -1 ? data.length : newline;
      if (end > at) {
        pending = true;
        lineBytes += end - at;
        // No more of a line is kept than could be shown (a byte over, to tell it did not fit).
        if (kept <= maxBytes) {
          const part = Buffer.from(data.subarray(at, Math.min(end, at + maxBytes + 1 - kept)));
          parts.push(part);
          kept += part.length;
        }
      }
      if (newline === -1) break;
      endLine();
      at = newline + 1;
    }
  }
  if (pending) endLine();
  return { lines, total: line - 1, bytes, full, clippedLineBytes };
}

// The numbered window and its summary, as `cat -n` with a last line saying how the file goes on.
function describeWindow(window: LineWindow, first: number, shown: string): [string, string] {
  const { lines, total } = window;
  if (total === 0) return [`(${shown} is empty)`, 'empty file'];
  if (first > total) {
    return [`(${shown} has ${plural(total, 'line')}; nothing to show from line ${first})`, `past the end (${plural(total, 'line')})`];
  }
  const last = first + lines.length - 1;
  const body = lines.map((line, i) => numbered(first + i, line)).join('\n');
  if (first === 1 && last === total && window.clippedLineBytes === undefined) return [body, plural(total, 'line')];
  const notes: string[] = [];
  if (window.clippedLineBytes !== undefined) {
    notes.push(
      `line ${last} is ${formatBytes(window.clippedLineBytes)} long: only its start is shown (a read returns at most ${formatBytes(MODEL_OUTPUT_MAX_BYTES)}; run_bash with cut or head -c shows more of it)`,
    );
  } else if (window.full) {
    notes.push(
      `a read returns at most ${formatBytes(MODEL_OUTPUT_MAX_BYTES)} of the file (${formatBytes(window.bytes)} in all), and this step records no more than that`,
    );
  }
  if (last < total) notes.push(`read on with offset ${last + 1}`);
  return [
    `${body}\n\n[lines ${first}-${last} of ${total}${notes.map((note) => `; ${note}`).join('')}]`,
    `lines ${first}-${last} of ${total}`,
  ];
}

// A line as `cat -n` prints it: its number right-aligned in six columns, a tab, the line.
function numbered(number: number, line: string): string {
  return `${String(number).padStart(6)}\t${line}`;
}

// The longest start of `bytes` within `max` bytes that does not split a UTF-8 character.
function cutUtf8(bytes: Buffer, max: number): Buffer {
  let end = Math.min(bytes.length, Math.max(0, max));
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
