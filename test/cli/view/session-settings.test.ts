// The settings as one command that drives a run uses them, flags last: the user's model and remote,
// --yes over defaultMode, the rules of --allowedTools / --disallowedTools and of a session's `a`, the
// sandbox switches, custom commands with a built-in's name set aside, the repository found around
// the current directory (none outside one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILT_IN_NAMES, repositoryRoot, sessionSettings } from '../../../src/cli/view/session-settings.js';
import { useScratch } from '../../helpers/scratch.js';

const scratch = useScratch();

async function setUp(user: Record<string, unknown>) {
  const repo = await scratch.repo({ 'src/a.ts': 'a\n', '.claude/commands/help.md': 'shadowed\n', '.claude/commands/review.md': 'Review\n' });
  const config = scratch.dir('savepoint-config-');
  mkdirSync(join(config, 'savepoint'), { recursive: true });
  writeFileSync(join(config, 'savepoint', 'settings.json'), JSON.stringify(user));
  return { repo, env: { XDG_CONFIG_HOME: config, HOME: config } };
}

test("the user's settings with the flags over them", async () => {
  const { repo, env } = await setUp({ model: 'claude-x', remote: 'backup', permissions: { defaultMode: 'ask', allow: ['Bash(npm test)'] }, sandbox: { network: true } });
  const plain = sessionSettings({}, join(repo.root, 'src'), env);
  assert.deepEqual([plain.root, plain.defaultModel, plain.remote, plain.mode, plain.network, plain.gitWrites], [repo.root, 'claude-x', 'backup', 'ask', true, false]);
  assert.equal(plain.rules.decide('run_bash', { command: 'npm test' })?.verdict, 'allow');
  assert.equal(plain.rules.decide('run_bash', { command: 'rm -rf /' }), undefined);
  const flagged = sessionSettings({ yes: true, allowGitWrites: true, allowedTools: ['Bash(make)'], disallowedTools: ['Bash(npm test)'] }, repo.root, env, ['Bash(ls)']);
  assert.deepEqual([flagged.mode, flagged.gitWrites], ['yes', true]);
  assert.equal(flagged.rules.decide('run_bash', { command: 'make' })?.verdict, 'allow');
  assert.equal(flagged.rules.decide('run_bash', { command: 'ls' })?.verdict, 'allow', 'an allow rule remembered in the session');
  assert.equal(flagged.rules.decide('run_bash', { command: 'npm test' })?.verdict, 'deny', 'a deny rule wins');
});

test("a custom command with a built-in's name is set aside; the repository's are marked untrusted", async () => {
  const { repo, env } = await setUp({});
  const settings = sessionSettings({}, repo.root, env);
  assert.deepEqual(settings.commands.map((c) => [c.name, c.untrusted]), [['review', true]]);
  assert.deepEqual(settings.shadowed.map((c) => c.name), ['help']);
  assert.ok(BUILT_IN_NAMES.has('help') && BUILT_IN_NAMES.has('?'));
  assert.equal(settings.mcpServers, undefined);
});

test('outside a repository there is no root', () => {
  const dir = scratch.dir('savepoint-no-repo-');
  assert.equal(repositoryRoot(dir, { GIT_CEILING_DIRECTORIES: dir }), undefined);
});
