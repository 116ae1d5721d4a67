// What the SDK's own lists say about a model: that Anthropic deprecated it (with its end-of-life
// date), or that extended thinking as savepoint asks for it (`thinking.type: "enabled"`) is
// deprecated for it. The SDK itself prints these with console.warn on every request; savepoint
// reads the same lists and tells the user once per run, in its own words (cli/terminal-run.ts).
// The lists are data files inside the SDK that its package does not export, so they are found
// next to its entry point; an SDK that moved them means no notice, never a failed run.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One thing to tell the user about the model, once per run. */
export type ModelNotice =
  /** Anthropic deprecated the model: its requests start failing at its end of life (the SDK's words for the date, "November 30th, 2026"). */
  | { notice: 'deprecated'; model: string; endOfLife: string }
  /** Extended thinking with `thinking.type: "enabled"` (`--thinking`) is deprecated for this model. */
  | { notice: 'thinking-deprecated'; model: string };

interface SdkLists {
  deprecated: Record<string, string>;
  thinking: readonly string[];
}

let lists: SdkLists | undefined;

/** The notices for a request to `model`, with extended thinking on or not (none when the SDK's lists cannot be read). */
export function modelNotices(model: string, thinking: boolean): ModelNotice[] {
  lists ??= readSdkLists();
  const notices: ModelNotice[] = [];
  const endOfLife = Object.hasOwn(lists.deprecated, model) ? lists.deprecated[model] : undefined;
  if (typeof endOfLife === 'string') notices.push({ notice: 'deprecated', model, endOfLife });
  if (thinking && lists.thinking.includes(model)) notices.push({ notice: 'thinking-deprecated', model });
  return notices;
}

function readSdkLists(): SdkLists {
  // Named so that it does not clash with the `require` the CLI's bundle declares in every chunk.
  const requireHere = createRequire(import.meta.url);
  const read = <T>(file: string, name: string, fallback: T): T => {
    try {
      const data = (requireHere(join(dirname(requireHere.resolve('@anthropic-ai/sdk')), 'internal', 'data', file)) as Record<string, unknown>)[name];
      return data && typeof data === 'object' ? (data as T) : fallback;
    } catch {
      return fallback;
    }
  };
  const thinking = read<unknown>('models-to-warn-with-thinking-enabled.js', 'MODELS_TO_WARN_WITH_THINKING_ENABLED', []);
  return {
    deprecated: read<Record<string, string>>('deprecated-models.js', 'DEPRECATED_MODELS', {}),
    thinking: Array.isArray(thinking) ? thinking.filter((m): m is string => typeof m === 'string') : [],
  };
}
