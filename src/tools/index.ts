// The tools the model gets. Each lives in its own file and is built by a factory that takes the
// repository root; they share path-utils.ts (every path stays inside the repository, after symbolic
// links, and out of .git) and define-tool.ts (inputs checked by hand, failures returned as results,
// never thrown). Tools return their whole output; truncate.ts trims it for the model.
import { createEditFileTool } from './edit-file.js';
import { createListFilesTool } from './list-files.js';
import { createReadFileTool } from './read-file.js';
import { createRunBashTool } from './run-bash.js';
import { createSearchTool } from './search.js';
import { createTaskTool, type SubagentRunner } from './task.js';
import type { SandboxConfig } from './sandbox.js';
import type { SpareShells } from './spare-shell.js';
import type { AnyTool } from './types.js';
import { createWebFetchTool } from './web-fetch.js';
import { createWriteFileTool } from './write-file.js';
import { createBashOutputTool } from './bash-output.js';
import { createKillBashTool } from './kill-bash.js';
import type { BackgroundCommands } from './background-commands.js';

export type { AnyTool, Tool, ToolContext, ToolImage, ToolInputSchema, ToolResult } from './types.js';
export { createEditFileTool, type EditFileInput } from './edit-file.js';
export { createListFilesTool, type ListFilesInput } from './list-files.js';
export { createReadFileTool, DEFAULT_READ_LIMIT, type ReadFileInput } from './read-file.js';
export { createRunBashTool, DEFAULT_BASH_TIMEOUT_MS, type RunBashInput } from './run-bash.js';
export { SpareShells, type SpareShellOptions } from './spare-shell.js';
export { probeSandbox, sandboxedCommand, sandboxEnv, type SandboxConfig, type SandboxedCommand } from './sandbox.js';
export { createSearchTool, MAX_SEARCH_MATCHES, type SearchInput } from './search.js';
export { createWriteFileTool, type WriteFileInput } from './write-file.js';
export { createWebFetchTool, MAX_FETCH_BYTES, MAX_REDIRECTS, type WebFetchInput, type WebFetchOptions } from './web-fetch.js';
export { createBashOutputTool, type BashOutputInput } from './bash-output.js';
export { createKillBashTool, type KillBashInput } from './kill-bash.js';
export {
  BackgroundCommands,
  backgroundCommandsOf,
  stopAllBackgroundCommands,
  type BackgroundJournal,
  type PastStart,
} from './background-commands.js';
export { createTaskTool, MAX_SUBAGENTS_AT_ONCE, TASK_TOOL_SHOWN, type SubagentRequest, type SubagentRunner, type TaskInput } from './task.js';
export { defineTool, errorMessage, toolError, toolOk, type ToolDefinition } from './define-tool.js';
export { resolveInRepo, toRepoRelative } from './path-utils.js';
export { truncateForModel, type TruncateOptions } from './truncate.js';
export { validateInput } from './validate-input.js';
export { asText, lastLine } from './truncate.js';

/**
 * Every tool, in the order the model is shown them, working on the repository at `root`; run_bash
 * confined by `sandbox`, protecting `gitDirs` (default: found from `root` once, see gitPaths), and
 * starting each command's process ahead with `spares` (spare-shell.ts); run_bash's background
 * commands, read by bash_output and stopped by kill_bash, are `background`'s (a run's: without it
 * they answer that there are none here); with `subagents`, the task tool last, each call a
 * subagent that runner drives.
 */
export function createTools(
  root: string,
  options: {
    sandbox?: SandboxConfig | (() => SandboxConfig);
    gitDirs?: string[];
    spares?: SpareShells;
    background?: BackgroundCommands;
    subagents?: SubagentRunner;
  } = {},
): AnyTool[] {
  return [
    createReadFileTool(root),
    createWriteFileTool(root),
    createEditFileTool(root),
    createRunBashTool(root, options.sandbox, options.gitDirs, options.spares, options.background),
    createListFilesTool(root),
    createSearchTool(root),
    createWebFetchTool(),
    createBashOutputTool(options.background),
    createKillBashTool(options.background),
    ...(options.subagents ? [createTaskTool(options.subagents)] : []),
  ];
}
