// The user's config folder, where their own settings, instructions and trust live.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The user's settings folder: $XDG_CONFIG_HOME/savepoint, else ~/.config/savepoint. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'savepoint');
}
