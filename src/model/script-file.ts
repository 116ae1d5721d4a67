// Reading and checking a model script (the format is described at the top of scripted.ts and in
// docs/scripted-models.md). Checking is strict, unknown keys included, because a typo such as
// "tool" for "tools" would otherwise make a demo silently do nothing.
import { readFile } from 'node:fs/promises';
import { ScriptError } from '../errors/index.js';
import type { Usage } from './types.js';

/** One tool call in a turn. Its id is made up from the turn and position (`toolu_s<turn>_<i>`). */
export interface ScriptTool {
  name: string;
  input?: Record<string, unknown>;
}

/** One answer of the scripted model. */
export interface ScriptTurn {
  text?: string;
  tools?: ScriptTool[];
  /** How long the answer takes; its text streams out in pieces across it. */
  delayMs?: number;
  /** Reported usage; fields left out are estimated from the request and the answer. */
  usage?: Partial<Usage>;
  /** Defaults to 'tool_use' when the turn has tools, else 'end_turn'. */
  stopReason?: string;
  /**
   * Extended thinking before the answer: a thinking block (signed `sig_<digest>`), and a
   * redacted_thinking block carrying this data.
   */
  thinking?: string;
  redactedThinking?: string;
}

/** A whole script: the model id it reports and its answers, in order. */
export interface Script {
  model?: string;
  description?: string;
  turns: ScriptTurn[];
  /**
   * The answer to every compaction request (a request that ends with the summarization
   * instruction); default a summary that names the turns it stands for. It uses no turn.
   */
  summary?: string;
  /** Where it was loaded from, for messages. */
  file?: string;
}

const SCRIPT_KEYS = ['model', 'description', 'turns', 'summary'];
const TURN_KEYS = ['text', 'tools', 'delayMs', 'usage', 'stopReason', 'thinking', 'redactedThinking'];
const TOOL_KEYS = ['name', 'input'];
const USAGE_KEYS = ['inputTokens', 'outputTokens', 'cacheCreationInputTokens', 'cacheReadInputTokens'];
// The Messages API's rule for tool names.
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Reads and checks the script at `file`; every problem is a ScriptError (code ESCRIPT) naming it. */
export async function loadScript(file: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
    throw new ScriptError(file, reason, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ScriptError(file, `is not valid JSON (${jsonProblem(text, error)})`, { cause: error });
  }
  return { ...validateScript(value, file), file };
}

/** Checks a parsed script (from a file or written in code) and returns it with defaults filled in. */
export function validateScript(value: unknown, source: string): Script {
  const fail = (reason: string): never => {
    throw new ScriptError(source, reason);
  };
  if (!isPlainObject(value)) return fail('is not a JSON object');
  checkKeys(value, SCRIPT_KEYS, 'the script', fail);
  if (value.model !== undefined && (typeof value.model !== 'string' || !value.model)) fail('has a "model" that is not a non-empty string');
  if (value.description !== undefined && typeof value.description !== 'string') fail('has a "description" that is not a string');
  if (value.summary !== undefined && (typeof value.summary !== 'string' || !value.summary))
    fail('has a "summary" that is not a non-empty string');
  if (!Array.isArray(value.turns)) return fail('has no "turns" array');
  if (value.turns.length === 0) fail('has an empty "turns" array: give the model at least one answer');
  const turns = value.turns.map((turn, index) => checkTurn(turn, `turns[${index}]`, fail));
  return {
    ...(value.model !== undefined ? { model: value.model as string } : {}),
    ...(value.description !== undefined ? { description: value.description as string } : {}),
    ...(value.summary !== undefined ? { summary: value.summary as string } : {}),
    turns,
  };
}

function checkTurn(turn: unknown, where: string, fail: (reason: string) => never): ScriptTurn {
  if (!isPlainObject(turn)) return fail(`has ${where} that is not an object`);
  checkKeys(turn, TURN_KEYS, where, fail);
  const { text, tools, delayMs, usage, stopReason, thinking, redactedThinking } = turn;
  if (thinking !== undefined && typeof thinking !== 'string') fail(`has ${where}.thinking that is not a string`);
  if (redactedThinking !== undefined && typeof redactedThinking !== 'string') fail(`has ${where}.redactedThinking that is not a string`);
  if (text !== undefined && typeof text !== 'string') fail(`has ${where}.text that is not a string`);
  if (tools !== undefined && !Array.isArray(tools)) fail(`has ${where}.tools that is not an array`);
  const checkedTools = ((tools as unknown[] | undefined) ?? []).map((tool, i) => checkTool(tool, `${where}.tools[${i}]`, fail));
  if (!text && checkedTools.length === 0) fail(`has ${where} with neither "text" nor "tools": an answer needs at least one`);
  if (delayMs !== undefined && !(typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0)) {
    fail(`has ${where}.delayMs that is not a number of milliseconds >= 0`);
  }
  if (stopReason !== undefined && (typeof stopReason !== 'string' || !stopReason))
    fail(`has ${where}.stopReason that is not a non-empty string`);
  if (usage !== undefined) {
    if (!isPlainObject(usage)) return fail(`has ${where}.usage that is not an object`);
    checkKeys(usage, USAGE_KEYS, `${where}.usage`, fail);
    for (const [key, count] of Object.entries(usage)) {
      if (!Number.isInteger(count) || (count as number) < 0) fail(`has ${where}.usage.${key} that is not a whole number >= 0`);
    }
  }
  return {
    ...(text !== undefined ? { text: text as string } : {}),
    ...(checkedTools.length ? { tools: checkedTools } : {}),
    ...(delayMs !== undefined ? { delayMs: delayMs as number } : {}),
    ...(usage !== undefined ? { usage: usage as Partial<Usage> } : {}),
    ...(stopReason !== undefined ? { stopReason: stopReason as string } : {}),
    ...(thinking !== undefined ? { thinking: thinking as string } : {}),
    ...(redactedThinking !== undefined ? { redactedThinking: redactedThinking as string } : {}),
  };
}

function checkTool(tool: unknown, where: string, fail: (reason: string) => never): ScriptTool {
  const shape = '(each tool entry is {"name": "read_file", "input": {...}})';
  if (!isPlainObject(tool)) return fail(`has ${where} that is not an object ${shape}`);
  checkKeys(tool, TOOL_KEYS, where, fail);
  if (typeof tool.name !== 'string' || !tool.name) return fail(`has ${where} without a "name" ${shape}`);
  if (!TOOL_NAME.test(tool.name))
    fail(`has ${where} named "${tool.name}", which is not a valid tool name (letters, digits, _ and -, at most 64)`);
  if (tool.input !== undefined && !isPlainObject(tool.input)) fail(`has ${where}.input that is not a JSON object ${shape}`);
  return { name: tool.name, input: (tool.input as Record<string, unknown> | undefined) ?? {} };
}

function checkKeys(value: Record<string, unknown>, allowed: string[], where: string, fail: (reason: string) => never): void {
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length) fail(`has unknown key "${unknown[0]}" in ${where} (allowed: ${allowed.join(', ')})`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The parser's complaint, with a line and column when it gave a character position.
function jsonProblem(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /position (\d+)/.exec(message);
  if (!match || /line \d+/.test(message)) return message;
  const before = text.slice(0, Number(match[1])).split('\n');
  return `${message}, line ${before.length} column ${before.at(-1)!.length + 1}`;
}
