// What every tool the model can call looks like. One file per tool builds one of these through a
// factory (`createReadFileTool(root)`), so tests can point it at any repository.
// No behaviour of its own: types only.

/** JSON Schema of a tool's input, as sent to the model in `tools[].input_schema`. */
export interface ToolInputSchema {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
}

/**
 * What a tool call produced. `output` is the whole text (the journal keeps all of it); the agent
 * trims it to head + tail before the model sees it (see truncate.ts), so trimming stays
 * deterministic on replay. A failed call is a result with `isError`, never a thrown error.
 */
export interface ToolResult {
  output: string;
  isError: boolean;
  /** A short one-line result for the step line and the commit subject: `exit 1: 1 failed, 4 passed`. */
  summary: string;
  /** A short note for the person's step line, in the output too for the model: a sandbox boundary the command hit (`sandbox: no network`). */
  note?: string;
  /** An MCP tool's result as its server returned it (content, structuredContent, isError), kept whole in the journal and handed back exactly on replay. */
  mcp?: Record<string, unknown>;
  /** An image the call read (read_file of a PNG, JPEG, GIF or WebP): the model gets it as an image block after `output`. */
  image?: ToolImage;
  /**
   * The image's bytes, in memory only: never part of the recorded result (the journal keeps them as
   * the git blob `image.blob` names, beside the entry). Read back from it on replay.
   */
  imageBytes?: Buffer;
}

/** An image in a tool result, as the journal records it: the bytes are a git blob of their own. */
export interface ToolImage {
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  mediaType: string;
  /** The git blob id of the bytes (runs/<run>/blobs/<id> on the journal branch). */
  blob: string;
  /** Their size. */
  bytes: number;
}

/** What a tool call is given besides its input: an abort signal and live hooks. */
export interface ToolContext {
  /** Aborts a running call (Ctrl-C): run_bash kills its whole process group. */
  signal?: AbortSignal;
  /** Told the pid of each process group a call starts (run_bash), once it runs; the group is gone when execute returns. */
  onSpawn?: (pid: number) => void;
  /**
   * Output as it comes (run_bash: stdout and stderr together), for a live view; the result still
   * holds all of it. Never called on replay.
   */
  onOutput?: (chunk: string) => void;
  /** The call's step in its run's journal (a subagent's run is named after it); absent outside a journal. */
  step?: number;
  /**
   * Asks the rules and the person about a further call of the same tool with `input`, as the call
   * itself was asked before it ran (web_fetch's next redirect hop, on another domain): undefined
   * goes on, a result is what to answer instead (denied, declined). Absent: nothing more is asked.
   */
  judge?: (input: Record<string, unknown>) => Promise<ToolResult | undefined>;
}

/** A tool the model can call: its definition for the model, what it needs from the journal, and how it runs. */
export interface Tool<Input = Record<string, unknown>> {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  /** Calls of this tool in one answer may run at the same time as other such calls, at most this many of this tool at once; absent: the call runs alone, after every call before it. */
  maxConcurrent?: number;
  /**
   * False when running the call twice could differ from running it once (a command, an overwrite):
   * the journal then records the intent before the call runs, so a crash mid-call is detectable.
   */
  isRepeatSafe(input: Input): boolean;
  /** True when the call changes the world and a person at a terminal should approve it first. */
  needsApproval(input: Input): boolean;
  /** True when the call may change files in the working tree (a checkpoint follows it). */
  mayChangeFiles(input: Input): boolean;
  /**
   * The files the call changes, repository-relative, when it knows them (an edit or a write changes
   * the one file it names): the checkpoint after it then looks at those alone, not the whole tree.
   * Undefined (or absent): any file may have changed, so the checkpoint scans the tree.
   */
  changedPaths?(input: Input): string[] | undefined;
  /** Short text of what the call does, for step lines and commit subjects: `run_bash "npm test"`. */
  describe(input: Input): string;
  execute(input: Input, context?: ToolContext): Promise<ToolResult>;
}

/** A tool of any input type. */
export type AnyTool = Tool<any>;
