// A step's input and result as readable text, shared by `savepoint show` and the HTML page. Pure.
// Tool inputs read as `key: value` lines (multi-line strings as indented blocks, so a file's
// content reads as the file); a tool's result is its whole output; a model's answer is its text and
// its tool calls. Anything of another shape is pretty-printed JSON.
import type { JournalEntry } from '../journal/entry.js';

/** The input of a step, for people. */
export function formatInput(input: unknown): string {
  return formatFields(input);
}

/** The result of a finished step, for people: the whole output, nothing cut. */
export function formatResult(entry: JournalEntry): string {
  const result = entry.result as Record<string, unknown> | undefined;
  if (result && typeof result === 'object' && typeof result.output === 'string') return result.output;
  if (entry.kind === 'model' && result && Array.isArray(result.content)) return formatModelAnswer(result);
  if (entry.kind === 'compact' && result && typeof result.summary === 'string') return formatCompaction(result);
  return formatFields(entry.result);
}

/** Whether a tool step's result is an error the model was told about (null: not a tool result). */
export function resultIsError(entry: JournalEntry): boolean | null {
  const result = entry.result as { isError?: unknown } | undefined;
  return result && typeof result.isError === 'boolean' ? result.isError : null;
}

function formatModelAnswer(result: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const block of result.content as Array<Record<string, unknown>>) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') parts.push(`(thinking)\n${indent(block.thinking)}`);
    else if (block.type === 'redacted_thinking') parts.push('(redacted thinking: encrypted by the API, sent back as it came)');
    else if (block.type === 'tool_use')
      parts.push(`→ calls ${String(block.name)} (${String(block.id)})\n${indent(formatFields(block.input))}`);
    else parts.push(JSON.stringify(block, null, 2));
  }
  if (typeof result.stopReason === 'string') parts.push(`stop reason: ${result.stopReason}`);
  return parts.join('\n\n');
}

// A compaction: the conversation's size before and after, and the summary it continued from.
function formatCompaction(result: Record<string, unknown>): string {
  const count = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en-US') : '?');
  return (
    `tokens before: ${count(result.tokensBefore)}\ntokens after: ${count(result.tokensAfter)} (estimated)\n` +
    `${count(result.summarizedMessages)} messages summarized, ${count(result.keptMessages)} kept whole (the journal keeps every original result)\n\nsummary:\n${indent(String(result.summary))}`
  );
}

function formatFields(value: unknown): string {
  if (!isPlainObject(value) || Object.keys(value).length === 0) return JSON.stringify(value, null, 2) ?? String(value);
  const simple = Object.values(value).every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
  if (!simple) return JSON.stringify(value, null, 2);
  return Object.entries(value)
    .map(([key, v]) =>
      typeof v === 'string' && v.includes('\n')
        ? `${key}:\n${indent(v.replace(/\n$/, ''))}`
        : `${key}: ${typeof v === 'string' ? v : JSON.stringify(v)}`,
    )
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
