// The permission rules' matcher and the settings files' checks, without a CLI: rules over commands
// (a prefix with `*`), over paths (`*` within a folder, `**` across), over tool names alone (MCP
// tools included), deny before allow, and a settings file refused with its key.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PermissionRules, parseRule, ruleMatches, suggestRule } from '../../src/settings/permissions.js';
import { parseSettings } from '../../src/settings/settings-file.js';
import { SettingsFileError } from '../../src/errors/index.js';

describe('permission rules', () => {
  test('a command rule matches commands that start with its prefix, and Claude Code\'s ":*" means the same', () => {
    assert.ok(ruleMatches('run_bash(npm test*)', 'run_bash', { command: 'npm test -- --watch' }));
    assert.ok(ruleMatches('run_bash(npm test:*)', 'run_bash', { command: 'npm test' }));
    assert.ok(!ruleMatches('run_bash(npm test*)', 'run_bash', { command: 'npm install evil' }));
    assert.ok(!ruleMatches('run_bash(npm test*)', 'write_file', { path: 'npm test' }));
  });

  test('a path rule keeps * within one folder and lets ** cross folders, on the normalised path', () => {
    assert.ok(ruleMatches('edit_file(src/**)', 'edit_file', { path: 'src/a/b.ts' }));
    assert.ok(ruleMatches('edit_file(src/**)', 'edit_file', { path: './src/x.ts' }));
    assert.ok(!ruleMatches('edit_file(src/**)', 'edit_file', { path: 'src/../secrets.txt' }));
    assert.ok(ruleMatches('edit_file(src/*.ts)', 'edit_file', { path: 'src/x.ts' }));
    assert.ok(!ruleMatches('edit_file(src/*.ts)', 'edit_file', { path: 'src/a/x.ts' }));
  });

  test('a rule without parentheses covers every call of the tool, and a name pattern covers MCP tools', () => {
    assert.ok(ruleMatches('write_file', 'write_file', { path: 'anything', content: '' }));
    assert.ok(ruleMatches('mcp__github__create_issue', 'mcp__github__create_issue', { title: 'x' }));
    assert.ok(ruleMatches('mcp__github__*', 'mcp__github__list_issues', {}));
    assert.ok(!ruleMatches('mcp__github__*', 'mcp__gitlab__list_issues', {}));
    assert.ok(!ruleMatches('mcp__github__x(foo)', 'mcp__github__x', { title: 'foo' }), 'a pattern needs a command or a path to match');
  });

  test('a deny rule wins over an allow rule that also matches', () => {
    const rules = new PermissionRules({ allow: ['run_bash'], deny: ['run_bash(rm *)'] });
    assert.deepEqual(rules.decide('run_bash', { command: 'rm -rf build' }), { verdict: 'deny', rule: 'run_bash(rm *)' });
    assert.deepEqual(rules.decide('run_bash', { command: 'ls' }), { verdict: 'allow', rule: 'run_bash' });
    assert.equal(rules.decide('write_file', { path: 'a' }), undefined);
    rules.addAllow('write_file');
    assert.equal(rules.decide('write_file', { path: 'a' })?.verdict, 'allow');
  });

  test('the rule offered at an approval names the command\'s first word or the file\'s folder', () => {
    assert.equal(suggestRule('run_bash', { command: 'npm test --silent' }), 'run_bash(npm *)');
    assert.equal(suggestRule('run_bash', { command: 'make' }), 'run_bash(make)');
    assert.equal(suggestRule('edit_file', { path: 'src/cli/a.ts' }), 'edit_file(src/cli/**)');
    assert.equal(suggestRule('write_file', { path: 'notes.txt' }), 'write_file(notes.txt)');
    assert.equal(suggestRule('mcp__s__t', {}), 'mcp__s__t');
  });

  test('a malformed rule says what is wrong with it', () => {
    assert.match(parseRule('run_bash(').problem ?? '', /is not a rule/);
    assert.match(parseRule('run_bash()').problem ?? '', /empty parentheses/);
    assert.equal(parseRule('run_bash(npm test*)').problem, undefined);
  });
});

describe('settings files', () => {
  const refused = (value: unknown) => {
    try {
      parseSettings(value, '/x/settings.json');
    } catch (error) {
      assert.ok(error instanceof SettingsFileError);
      assert.equal(error.code, 'ESETTINGS');
      return error;
    }
    assert.fail('the settings were accepted');
  };

  test('a key of the wrong type is refused with the file and the key', () => {
    assert.equal(refused({ model: 3 }).data.key, 'model');
    assert.equal(refused({ permissions: { allow: 'write_file' } }).data.key, 'permissions.allow');
    assert.equal(refused({ permissions: { deny: ['ok', 'bad('] } }).data.key, 'permissions.deny[1]');
    assert.equal(refused({ permissions: { defaultMode: 'always' } }).data.key, 'permissions.defaultMode');
    assert.equal(refused({ sandbox: { network: 'yes' } }).data.key, 'sandbox.network');
    assert.equal(refused({ mcpServers: { s: { args: [] } } }).data.key, 'mcpServers.s');
    assert.match(refused([]).message, /\/x\/settings\.json/);
  });

  test('MCP servers pass through as written, and unknown keys are kept aside rather than refused', () => {
    const layer = parseSettings({ mcpServers: { gh: { command: 'gh-mcp', args: ['--stdio'], env: { A: 'b' } }, web: { type: 'http', url: 'http://x' } }, hooks: {} }, 'f');
    assert.deepEqual(layer.mcpServers, { gh: { command: 'gh-mcp', args: ['--stdio'], env: { A: 'b' } }, web: { type: 'http', url: 'http://x' } });
    assert.deepEqual(layer.unknownKeys, ['hooks']);
  });
});
