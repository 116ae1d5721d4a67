// What savepoint needs to know about the live model before it talks to it (its name, credentials, its context window). Kept apart from
// anthropic.ts so that importing it does not load the SDK (a replay never calls the model, and the
// SDK is a third of the CLI's start-up time).

/** The model used when none is named. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** True when the environment holds a credential the SDK will use. */
export function hasAnthropicCredentials(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
}

// How many tokens a model's context window holds, for deciding when a conversation nears it.
// Every current Claude model takes 200,000 tokens by default (larger windows are opt-in betas);
// a model savepoint does not know (a local server, a script) is assumed to take as many, and
// `--context-window <tokens>` says otherwise.

/** The context window assumed when the model is not known. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;

const WINDOWS: Array<{ match: RegExp; tokens: number }> = [{ match: /^claude-/, tokens: 200_000 }];

/** The context window of `model`, in tokens. */
export function contextWindowFor(model: string): number {
  return WINDOWS.find((row) => row.match.test(model))?.tokens ?? DEFAULT_CONTEXT_WINDOW;
}
