// What savepoint needs to know about the live model before it talks to it. Kept apart from
// anthropic.ts so that importing it does not load the SDK (a replay never calls the model, and the
// SDK is a third of the CLI's start-up time).

/** The model used when none is named. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

/** True when the environment holds a credential the SDK will use. */
export function hasAnthropicCredentials(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
}
