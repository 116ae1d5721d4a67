// Builds a Tool from its parts and gives every tool the same guarantees: the input is checked
// against the schema before anything runs, and a failure comes back as an `isError` result, never as
// a thrown error, so one bad call cannot crash a run.
import { isSavepointError } from '../errors/index.js';
import { oneLine } from '../format/text.js';
import type { Tool, ToolContext, ToolInputSchema, ToolResult } from './types.js';
import { validateInput } from './validate-input.js';

/** What a tool file provides; `run` only ever sees input that matched the schema. */
export interface ToolDefinition<Input> {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  describe(input: Partial<Input>): string;
  run(input: Input, context: ToolContext): Promise<ToolResult>;
  /** Defaults: repeat-safe, no approval, no file changes (a read). */
  isRepeatSafe?(input: Input): boolean;
  needsApproval?(input: Input): boolean;
  mayChangeFiles?(input: Input): boolean;
  /** The files the call changes, when it knows them (see Tool.changedPaths). Default: unknown. */
  changedPaths?(input: Input): string[] | undefined;
  /** How many calls of the tool may run beside each other (see Tool.maxConcurrent). Default: alone. */
  maxConcurrent?: number;
}

/** The Tool the agent and the journal use, built from a definition. */
export function defineTool<Input>(definition: ToolDefinition<Input>): Tool<Input> {
  const { name, description, inputSchema } = definition;
  const isValid = (input: unknown): input is Input => validateInput(inputSchema, input) === undefined;
  // Invalid input never runs: it is safe to repeat, needs no approval and changes nothing.
  const ask = (predicate: ((input: Input) => boolean) | undefined, input: unknown, fallback: boolean) => {
    if (!isValid(input)) return false;
    try {
      return predicate ? predicate(input) : fallback;
    } catch {
      return fallback;
    }
  };
  return {
    name,
    description,
    inputSchema,
    ...(definition.maxConcurrent !== undefined ? { maxConcurrent: definition.maxConcurrent } : {}),
    isRepeatSafe: (input) => !isValid(input) || ask(definition.isRepeatSafe, input, true),
    needsApproval: (input) => ask(definition.needsApproval, input, false),
    mayChangeFiles: (input) => ask(definition.mayChangeFiles, input, false),
    changedPaths(input) {
      if (!definition.changedPaths || !isValid(input)) return undefined;
      try {
        return definition.changedPaths(input);
      } catch {
        return undefined; // a path the call will refuse: the checkpoint scans, as for any call
      }
    },
    describe(input) {
      const given = typeof input === 'object' && input !== null ? input : {};
      try {
        return definition.describe(given as Partial<Input>);
      } catch {
        return name;
      }
    },
    async execute(input, context = {}) {
      const problem = validateInput(inputSchema, input);
      if (problem) return toolError(problem, 'error: invalid input');
      try {
        return await definition.run(input, context);
      } catch (error) {
        return toolError(errorMessage(error));
      }
    },
  };
}

/** A successful result. */
export function toolOk(output: string, summary: string): ToolResult {
  return { output, isError: false, summary };
}

/** A failed result; the summary defaults to the message's first words. */
export function toolError(message: string, summary = `error: ${oneLine(message, 53)}`): ToolResult {
  return { output: message, isError: true, summary };
}

/**
 * The message of an error raised by a tool: ours as they are, Node's file errors in plain words,
 * naming `path` (as the model wrote it) rather than the absolute path on this machine.
 */
export function errorMessage(error: unknown, path?: string): string {
  if (isSavepointError(error)) return error.message;
  const { code, message } = error as NodeJS.ErrnoException;
  const where = path ? `: ${path}` : '';
  switch (code) {
    case 'ENOENT':
      return `No such file or directory${where}`;
    case 'EISDIR':
      return `Is a directory, not a file${where} (use list_files to see what it holds)`;
    case 'ENOTDIR':
      return `A part of the path is a file, not a directory${where}`;
    case 'EACCES':
    case 'EPERM':
      return `Permission denied${where}`;
    default:
      return message ?? String(error);
  }
}
