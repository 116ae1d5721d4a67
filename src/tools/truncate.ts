// Trims a long tool output to what a model should see: its head and its tail, with one line in the
// middle that says what was cut and how the model can see it (a narrower command or a line range:
// the model cannot read the journal). The agent applies it when it builds a tool_result; tools return
// the whole output, which the journal keeps for people, so the trimming is the same on every replay.
import { formatBytes, plural } from '../format/numbers.js';

/** The limits a trimmed output stays within, note line included. */
export interface TruncateOptions {
  maxBytes?: number;
  maxLines?: number;
  /** 'journal': the note as savepoint 0.1.0 wrote it, for runs it recorded (their replay must send the same words). */
  noteStyle?: 'journal';
}

// Room kept for the note line itself.
const NOTE_RESERVE_BYTES = 200;

/** The most of a tool's output a model is shown whole, in bytes (read_file returns no more than this). */
export const MODEL_OUTPUT_MAX_BYTES = 50 * 1024;

/** The most of a tool's output a model is shown whole, in lines. */
export const MODEL_OUTPUT_MAX_LINES = 2000;

/** The text itself when it is within the limits, otherwise head + `[... N lines (X MB) cut from the middle; ...]` + tail. */
export function truncateForModel(
  text: string,
  { maxBytes = MODEL_OUTPUT_MAX_BYTES, maxLines = MODEL_OUTPUT_MAX_LINES, noteStyle }: TruncateOptions = {},
): string {
  const totalBytes = Buffer.byteLength(text);
  const lines = text.split('\n');
  if (lines.length <= maxLines && totalBytes <= maxBytes) return text;

  const lineBudget = Math.max(1, Math.floor((maxLines - 1) / 2));
  const byteBudget = Math.max(1, Math.floor((maxBytes - NOTE_RESERVE_BYTES) / 2));
  const head = take(lines, lineBudget, byteBudget);
  // A line the head had to clip can still show its end in the tail.
  const rest = lines.slice(head.lines.length - (head.clipped ? 1 : 0));
  const tail = take(rest.reverse(), lineBudget, byteBudget, true);
  tail.lines.reverse();

  const shownLines = head.lines.length + tail.lines.length;
  const cutLines = lines.length - shownLines + (head.clipped ? 1 : 0) + (tail.clipped ? 1 : 0);
  const cutBytes = totalBytes - head.bytes - tail.bytes;
  const note =
    noteStyle === 'journal'
      ? `[... ${plural(cutLines, 'line')} (${formatBytes(cutBytes)}) cut; the full output is in the journal ...]`
      : `[... ${plural(cutLines, 'line')} (${formatBytes(cutBytes)}) cut from the middle; to see them, narrow the command (grep, head, tail) or read a range (offset, limit) ...]`;
  return [...head.lines, note, ...tail.lines].join('\n');
}

// Lines from the start of `lines` within both budgets. A first line that alone is over the byte
// budget (minified code, a progress bar) is clipped rather than dropped, so something is shown;
// `fromEnd` (lines given last first) keeps the end of that line instead of its start.
function take(lines: string[], lineBudget: number, byteBudget: number, fromEnd = false) {
  const taken: string[] = [];
  let bytes = 0;
  let clipped = false;
  for (const line of lines) {
    if (taken.length >= lineBudget) break;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > byteBudget) {
      if (taken.length === 0) {
        const part = clipUtf8(line, byteBudget - 1, fromEnd);
        taken.push(part);
        bytes += Buffer.byteLength(part) + 1;
        clipped = true;
      }
      break;
    }
    taken.push(line);
    bytes += size;
  }
  return { lines: taken, bytes, clipped };
}

// The longest start (or end) of `text` that fits in `maxBytes` of UTF-8 without splitting a character.
function clipUtf8(text: string, maxBytes: number, fromEnd: boolean): string {
  const bytes = Buffer.from(text);
  const isContinuation = (i: number) => ((bytes[i] ?? 0) & 0xc0) === 0x80;
  if (fromEnd) {
    let start = Math.max(0, bytes.length - maxBytes);
    while (start < bytes.length && isContinuation(start)) start++;
    return bytes.subarray(start).toString('utf8');
  }
  let end = Math.min(bytes.length, Math.max(0, maxBytes));
  while (end > 0 && isContinuation(end)) end--;
  return bytes.subarray(0, end).toString('utf8');
}

// Small text helpers of the tools' outputs and summaries (general formatting lives in src/format/).

/** The last non-empty line of a text (what a command's summary shows), or '' if there is none. */
export function lastLine(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line) return line;
  }
  return '';
}

/** Renders a value the model sent as text for a step description, whatever its type. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
