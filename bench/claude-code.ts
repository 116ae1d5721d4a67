// Claude Code (@anthropic-ai/claude-code) for the benchmarks that compare against it (bench/session.ts,
// bench/storage.ts): installed on demand, pinned, into the bench's cache folder (as bench/peers.ts
// installs pi), never a dependency of this project; and the home folder and environment it runs with
// against the local fake Anthropic server.
//
// Claude Code 2.1.x ships as a native executable (the npm package's postinstall puts the platform
// package's binary at bin/claude.exe); it starts with no network when pointed at a server with
// ANTHROPIC_BASE_URL and told not to reach out (DISABLE_AUTOUPDATER, DISABLE_TELEMETRY,
// DISABLE_ERROR_REPORTING, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC). Everything it writes goes under
// a temporary HOME: `~/.claude.json` (its state: onboarding done, the folder trusted, the API key
// approved, so no first-run dialog stops it), `~/.claude/settings.json` (the bypass-permissions
// warning already accepted), and its sessions, `~/.claude/projects/<cwd with every non-alphanumeric
// character as ->/<session id>.jsonl`. As root it refuses --dangerously-skip-permissions unless
// IS_SANDBOX=1. MAX_THINKING_TOKENS=0 turns extended thinking off: the turns compared with pi's and
// savepoint's carry none.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installInCache } from './lib.js';

/** The Claude Code release compared against (pinned: a newer one may behave differently). */
export const CLAUDE_VERSION = '2.1.332';
/** Its npm package. */
export const CLAUDE_PACKAGE = '@anthropic-ai/claude-code';
/** The API key Claude Code is given (the fake server takes any). */
const API_KEY = 'sk-ant-bench-0000000000000000';

/** Where Claude Code's executable is (installing it first if needed), or why it cannot be had. */
export function ensureClaude(log: (message: string) => void): { cli: string } | { skipped: string } {
  return installInCache(log, {
    pkg: CLAUDE_PACKAGE,
    version: CLAUDE_VERSION,
    folder: `claude-code-${CLAUDE_VERSION}`,
    entry: ['bin', 'claude.exe'],
    timeoutMs: 600_000,
    works: (cli) => spawnSync(cli, ['--version'], { encoding: 'utf8', timeout: 60_000 }).stdout?.includes(CLAUDE_VERSION) ?? false,
    failed: (why) => `Claude Code ${CLAUDE_VERSION} could not be installed or run (npm install: ${why}); no network?`,
  });
}

/** A home folder for Claude Code and the working directory it is used in. */
export interface ClaudePlace {
  cli: string;
  home: string;
  cwd: string;
}

/** Writes the state and settings under `place.home` that let Claude Code start in `place.cwd` with no dialog. */
export function prepareClaudeHome(place: ClaudePlace): void {
  mkdirSync(join(place.home, '.claude'), { recursive: true });
  const state = {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_VERSION,
    theme: 'dark',
    bypassPermissionsModeAccepted: true,
    // Claude Code asks once whether to use an API key from the environment; it remembers the key's last 20 characters.
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects: { [place.cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
  };
  writeFileSync(join(place.home, '.claude.json'), JSON.stringify(state, null, 2));
  writeFileSync(join(place.home, '.claude', 'settings.json'), JSON.stringify({ skipDangerousModePermissionPrompt: true }, null, 2));
}

/** The environment Claude Code runs with against the fake server at `url` (undefined: unset). */
export function claudeEnv(place: ClaudePlace, url: string): Record<string, string | undefined> {
  return {
    HOME: place.home,
    CLAUDE_CONFIG_DIR: undefined,
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: API_KEY,
    ANTHROPIC_AUTH_TOKEN: undefined,
    IS_SANDBOX: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    MAX_THINKING_TOKENS: '0',
    NO_COLOR: '1',
  };
}

/** `claudeEnv` over this process's environment, for a spawned child. */
export function claudeProcessEnv(place: ClaudePlace, url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(claudeEnv(place, url))) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** The folder Claude Code keeps the sessions of `cwd` in, under `home`. */
export function claudeProjectDir(home: string, cwd: string): string {
  return join(home, '.claude', 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
}
