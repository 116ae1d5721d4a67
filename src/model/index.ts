// Everything the rest of savepoint needs to talk to a model: the shapes (types.ts), the live
// Anthropic provider, the scripted provider, their errors, and createProvider to pick one by name.
import { resolve } from 'node:path';
import type { AnthropicProviderOptions } from './anthropic.js';
import { DEFAULT_MODEL } from './defaults.js';
import { ScriptError } from '../errors/index.js';
import { createScriptedProvider, loadScript } from './scripted.js';
import type { ModelProvider } from './types.js';

/** The conversation shapes (types.ts), so callers need only this module. */
export type * from './types.js';
export { DEFAULT_MODEL, hasAnthropicCredentials } from './defaults.js';
export type { AnthropicProviderOptions } from './anthropic.js';
export type { ModelNotice } from './notices.js';
export {
  createScriptedProvider,
  loadScript,
  validateScript,
  type Script,
  type ScriptTurn,
  type ScriptTool,
  type ScriptedProviderOptions,
} from './scripted.js';
export { ModelError, ScriptError, type ModelErrorData } from '../errors/index.js';

/** The prefix of a model name that selects a script: `script:fixtures/demo.json`. */
export const SCRIPT_PREFIX = 'script:';

/** Options of createProvider: the Anthropic ones, plus where script paths start from. */
export interface CreateProviderOptions extends Omit<AnthropicProviderOptions, 'model'> {
  /** Where a `script:` path is relative to; default the current directory. */
  cwd?: string;
}

/**
 * The provider for a `--model` value: `script:<file>` loads that script, anything else (or nothing,
 * meaning DEFAULT_MODEL) is an Anthropic model id.
 */
export async function createProvider(modelName: string | undefined, options: CreateProviderOptions = {}): Promise<ModelProvider> {
  const { cwd, ...anthropic } = options;
  if (modelName?.startsWith(SCRIPT_PREFIX)) {
    const file = modelName.slice(SCRIPT_PREFIX.length);
    if (!file) throw new ScriptError('(none)', `was not named: write the model as ${SCRIPT_PREFIX}<file>`);
    const script = await loadScript(resolve(cwd ?? process.cwd(), file));
    // The name stays as typed, so run.json and step lines show what the user asked for.
    return createScriptedProvider(script, { name: modelName });
  }
  // Loaded on first use: replaying a run needs no SDK (the import is a third of start-up).
  const { createAnthropicProvider } = await import('./anthropic.js');
  return createAnthropicProvider({ ...anthropic, model: modelName || DEFAULT_MODEL });
}

// The one preparation of this process, shared by every caller (a module loads once anyway).
let preparing: Promise<void> | undefined;

/**
 * Loads, ahead of the first live request, what that request would otherwise load on its way out:
 * the SDK (its import is a third of start-up) and Node's own fetch (undici, http, http2: loaded
 * by the first fetch, about as long again), by one request answered in this process
 * (rehearseRequest: nothing is sent, no connection opened). An interactive session calls it while
 * the person types, so that Enter finds them ready. A `script:` model needs neither. Never rejects
 * (a failure here is the first live request's to report).
 */
export function prepareLiveModel(modelName?: string): Promise<void> {
  if (modelName?.startsWith(SCRIPT_PREFIX)) return Promise.resolve();
  return (preparing ??= (async () => {
    const { rehearseRequest } = await import('./anthropic.js');
    await rehearseRequest();
  })().catch(() => undefined));
}
