// A run's pinned configuration (RunConfig in journal/entry.ts): what shapes its model requests and
// is not in the entries. A new run gets one made from the build's values and the caller's options;
// an existing run keeps its own, and an option that would change it is refused rather than
// silently ignored. Runs recorded before pinning (savepoint 0.1.0) get what that build sent
// (legacy-config.ts), pinned at their next write.
import { SYSTEM_PROMPT } from '../agent/system-prompt.js';
import { UsageError } from '../errors/index.js';
import type { RunConfig, RunRecord } from '../journal/entry.js';
import { contextWindowFor } from '../model/defaults.js';
import { DEFAULT_MODEL } from '../model/index.js';
import type { AnyTool } from '../tools/types.js';
import { LEGACY_ADDED_PROPERTIES, LEGACY_READ_FILE_DESCRIPTION, LEGACY_RUN_BASH_DESCRIPTION, LEGACY_TOOL_NAMES } from './legacy-config.js';
import type { SessionOptions } from './types.js';

/** A tool as a run's configuration records it: what the model is shown of it. */
export type ShownTool = Pick<AnyTool, 'name' | 'description' | 'inputSchema'>;

// The tools whose descriptions changed since savepoint 0.1.0, with the words it sent.
const LEGACY_DESCRIPTIONS: Record<string, string> = { run_bash: LEGACY_RUN_BASH_DESCRIPTION, read_file: LEGACY_READ_FILE_DESCRIPTION };

/** The model's answer length when none is given. */
export const DEFAULT_MAX_TOKENS = 8192;

/** The fraction of the context window at which a run compacts, when none is given. */
export const DEFAULT_COMPACT_AT = 0.8;

/** The settings of SessionOptions that the pinned configuration holds. */
export type ConfigOptions = Pick<SessionOptions, 'model' | 'maxTokens' | 'compact' | 'compactAt' | 'contextWindow' | 'thinking'>;

/** The project instructions read for a new run: which file, and its text. */
export interface ProjectInstructions {
  file: string;
  text: string;
}

/** The configuration a run uses: its pinned one, or one made now from the build and `options`. */
export function runConfig(
  record: RunRecord | undefined,
  options: ConfigOptions,
  tools: readonly ShownTool[],
  instructions?: ProjectInstructions,
): RunConfig {
  if (record?.config) return record.config;
  if (record) return legacyConfig(record, options, tools);
  const model = options.model ?? DEFAULT_MODEL;
  const thinking = options.thinking;
  // The answer must have room beyond the thinking budget (the API refuses max_tokens <= budget).
  const maxTokens = options.maxTokens ?? (thinking ? thinking + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS);
  if (thinking && maxTokens <= thinking)
    throw new UsageError(
      `--thinking ${thinking} needs a larger --max-tokens than ${maxTokens}: the answer must have room beyond the thinking budget.`,
    );
  return {
    model,
    system: instructions ? withInstructions(SYSTEM_PROMPT, instructions) : SYSTEM_PROMPT,
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: { ...tool.inputSchema } })),
    maxTokens,
    compaction: {
      enabled: options.compact !== false,
      at: options.compactAt ?? DEFAULT_COMPACT_AT,
      contextWindow: options.contextWindow ?? contextWindowFor(model),
    },
    ...(thinking ? { thinking: { budgetTokens: thinking } } : {}),
    ...(instructions ? { instructions: { file: instructions.file, chars: instructions.text.length } } : {}),
    toolImages: true,
  };
}

/**
 * The configuration of a run recorded before pinning (savepoint 0.1.0): what that build sent, so the
 * run replays without divergence; compaction as a new run gets it (it only adds steps after the
 * recorded ones).
 */
function legacyConfig(record: RunRecord, options: ConfigOptions, tools: readonly ShownTool[]): RunConfig {
  const model = record.model ?? options.model ?? DEFAULT_MODEL;
  return {
    model,
    system: SYSTEM_PROMPT,
    // Only the tools that build had, with the inputs it had: a tool or an input added since would change what the run is shown.
    tools: tools
      .filter((tool) => LEGACY_TOOL_NAMES.includes(tool.name))
      .map((tool) => ({
        name: tool.name,
        description: LEGACY_DESCRIPTIONS[tool.name] ?? tool.description,
        input_schema: legacySchema(tool),
      })),
    maxTokens: DEFAULT_MAX_TOKENS,
    compaction: {
      enabled: options.compact !== false,
      at: options.compactAt ?? DEFAULT_COMPACT_AT,
      contextWindow: options.contextWindow ?? contextWindowFor(model),
    },
    outputNote: 'journal',
  };
}

// A tool's input schema as savepoint 0.1.0 had it: without the properties added since.
function legacySchema(tool: ShownTool): Record<string, unknown> {
  const added = LEGACY_ADDED_PROPERTIES[tool.name];
  if (!added) return { ...tool.inputSchema };
  const properties = Object.fromEntries(Object.entries(tool.inputSchema.properties).filter(([name]) => !added.includes(name)));
  return { ...tool.inputSchema, properties };
}

/** The system prompt with the project's instructions after it. */
export function withInstructions(system: string, instructions: ProjectInstructions): string {
  return `${system}\n\n# Project instructions (from ${instructions.file})\n\n${instructions.text.trim()}\n`;
}

/**
 * Refuses an option given for an existing run that its recorded configuration contradicts: the run
 * replays and continues with what it recorded, so a different model (or thinking, or compaction
 * setting) would either diverge or be silently ignored. A new run (--fresh) takes any of them.
 */
export function assertPinned(record: RunRecord | undefined, options: ConfigOptions): void {
  if (!record) return;
  const pinned = record.config;
  const model = pinned?.model ?? record.model;
  const clashes: string[] = [];
  if (options.model !== undefined && model !== undefined && options.model !== model)
    clashes.push(`--model ${options.model} (it uses ${model})`);
  if (pinned) {
    if (options.maxTokens !== undefined && options.maxTokens !== pinned.maxTokens)
      clashes.push(`--max-tokens ${options.maxTokens} (it uses ${pinned.maxTokens})`);
    if (options.thinking !== undefined && options.thinking !== pinned.thinking?.budgetTokens)
      clashes.push(`--thinking ${options.thinking} (it uses ${pinned.thinking ? pinned.thinking.budgetTokens : 'none'})`);
    const c = pinned.compaction;
    if (options.compact === false && c.enabled) clashes.push('--no-compact (it compacts)');
    if (options.compactAt !== undefined && (!c.enabled || options.compactAt !== c.at))
      clashes.push(`--compact-at ${options.compactAt} (it uses ${c.enabled ? c.at : 'no compaction'})`);
    if (options.contextWindow !== undefined && options.contextWindow !== c.contextWindow)
      clashes.push(`--context-window ${options.contextWindow} (it uses ${c.contextWindow})`);
  }
  if (clashes.length === 0) return;
  // The model alone may change within the run, as a journaled step: `continue --model` says how.
  const modelHint =
    options.model !== undefined && clashes[0]?.startsWith('--model')
      ? ` To switch models from the next turn on, keep the run and give it a follow-up: savepoint continue --run ${record.id} --model ${options.model} "<what next>" (or /model in a session).`
      : '';
  throw new UsageError(
    `Run ${record.id} is pinned to the configuration recorded when it was created (run.json), so it replays and ` +
      `continues with it; it cannot take ${clashes.join(', ')}. Drop ${clashes.length === 1 ? 'that option' : 'those options'} to go on with the ` +
      `recorded ones, or start a new run with them: savepoint run --fresh with the run's task.${modelHint}`,
  );
}
