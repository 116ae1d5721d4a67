// The permission rules' matcher and the settings files' checks, without a CLI: rules over every
// command a shell line would run (an allow rule covers all of them, a deny rule any one; a line the
// parse cannot vouch for is allowed by no command rule), over the file a path reaches (absolute, `..`,
// a trailing slash, symbolic links), Claude Code's spellings, over tool names alone (MCP tools
// included), deny before allow, writes to the files that decide what runs, the narrowest rule `a`
// remembers, and a settings file refused with its key (a rule that names no tool included).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { PermissionRules, parseRule, ruleMatches, suggestRules, writesControlFile } from '../../src/settings/permissions.js';
import { MAX_JUDGED_CHARS, parseShellLine } from '../../src/settings/shell-line.js';
import { parseSettings } from '../../src/settings/settings-file.js';
import { SettingsFileError } from '../../src/errors/index.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const bash = (command: string) => ({ command });

describe('permission rules', () => {
  test('a command rule matches commands that start with its prefix, and Claude Code\'s ":*" means the same', () => {
    assert.ok(ruleMatches('run_bash(npm test*)', 'run_bash', bash('npm test -- --watch')));
    assert.ok(ruleMatches('run_bash(npm test:*)', 'run_bash', bash('npm test')));
    assert.ok(!ruleMatches('run_bash(npm test*)', 'run_bash', bash('npm install evil')));
    assert.ok(!ruleMatches('run_bash(npm test*)', 'write_file', { path: 'npm test' }));
  });

  test('an allow rule must cover every command the line would run: ;, newlines, $(…), backticks, subshells, pipes, && and ||', () => {
    const allows = (command: string) => ruleMatches('run_bash(npm test*)', 'run_bash', bash(command));
    assert.ok(allows('npm test'));
    assert.ok(allows('  npm test --silent 2>&1'), 'leading spaces are not part of the command');
    assert.ok(allows('npm test && npm test -- --grep x'));
    for (const line of ['npm test; touch A', 'npm test\ntouch B', 'npm test $(touch C)', 'npm test `touch D`', 'npm test | (touch E)', 'npm test || touch F', 'npm test & touch G', 'npm test "${x:-$(touch H)}"', 'x=$(touch I) npm test']) {
      assert.ok(!allows(line), `"${line}" runs a command the rule does not cover`);
    }
  });

  test('a line the parse cannot vouch for is allowed by no command rule, and a rule with no pattern still covers it', () => {
    for (const line of [`npm test ${'x'.repeat(MAX_JUDGED_CHARS)}`, '$CMD test', '{npm,test}', 'np? test', 'eval "npm test"', 'f() { npm test; }; f', 'npm test <<EOF\nx\nEOF', 'arr=(1 2); npm test', 'npm test "unclosed']) {
      assert.ok(parseShellLine(line).unjudgeable, `"${line}" cannot be judged`);
      assert.ok(!ruleMatches('run_bash(*)', 'run_bash', bash(line)), `"${line}" is not allowed by run_bash(*)`);
      assert.ok(ruleMatches('run_bash', 'run_bash', bash(line)), 'run_bash alone allows every command');
    }
  });

  test('a deny rule matches when any command of the line matches: a leading space, after ;, inside $(…), quoted, behind a wrapper or sh -c', () => {
    const denies = (command: string) => ruleMatches('run_bash(rm *)', 'run_bash', bash(command), { as: 'deny' });
    for (const line of [' rm -f x', 'true; rm -f x', 'true && rm -f x', 'echo $(rm -f x)', '(rm -f x)', '"rm" -f x', 'FOO=1 rm -f x', 'sudo rm -f x', 'env A=1 rm -f x', '/bin/rm -f x', 'timeout 5 rm -f x', 'sh -c "true; rm -f x"', '{rm,-f,x}', `cat <<EOF\nx\nEOF\nrm -f x`, `echo ${'x'.repeat(MAX_JUDGED_CHARS)}; rm -f x`, 'xargs rm -f', "sh -c 'rm -f x'", 'arr=(1 2); rm -f x', 'if true; then rm -f x; fi']) {
      assert.ok(denies(line), `"${line}" is denied`);
    }
    assert.ok(!denies('echo rm -f x'), 'an argument that reads "rm" runs no rm');
  });

  test('a path rule keeps * within one folder and lets ** cross folders, on the normalised path', () => {
    assert.ok(ruleMatches('edit_file(src/**)', 'edit_file', { path: 'src/a/b.ts' }));
    assert.ok(ruleMatches('edit_file(src/**)', 'edit_file', { path: './src/x.ts' }));
    assert.ok(!ruleMatches('edit_file(src/**)', 'edit_file', { path: 'src/../secrets.txt' }));
    assert.ok(ruleMatches('edit_file(src/*.ts)', 'edit_file', { path: 'src/x.ts' }));
    assert.ok(!ruleMatches('edit_file(src/*.ts)', 'edit_file', { path: 'src/a/x.ts' }));
  });

  test('a path rule matches the file the path reaches in the repository: absolute, a trailing slash, through a symbolic link', async () => {
    const repo = await scratch.repo({ 'src/a.ts': 'a\n', 'README.md': '# r\n' });
    const root = realpathSync(repo.root);
    symlinkSync('..', join(root, 'src', 'up'));
    symlinkSync('.env', join(root, 'config-link'));
    const rules = new PermissionRules({ deny: ['write_file(.env*)'], allow: ['edit_file(src/**)'], root });
    assert.equal(rules.decide('write_file', { path: join(root, '.env'), content: 'x' })?.verdict, 'deny', 'an absolute path');
    assert.equal(rules.decide('write_file', { path: '.env/', content: 'x' })?.verdict, 'deny', 'a trailing slash');
    assert.equal(rules.decide('write_file', { path: 'src/../.env.local', content: 'x' })?.verdict, 'deny', '..');
    assert.equal(rules.decide('write_file', { path: 'config-link', content: 'x' })?.verdict, 'deny', 'a symbolic link to .env');
    assert.equal(rules.decide('edit_file', { path: 'src/a.ts', old_string: 'a', new_string: 'b' })?.verdict, 'allow');
    assert.equal(rules.decide('edit_file', { path: 'src/up/README.md', old_string: 'r', new_string: 's' }), undefined, 'src/up/README.md is README.md: not under src/');
    assert.equal(rules.decide('edit_file', { path: 'src/up/src/a.ts', old_string: 'a', new_string: 'b' })?.verdict, 'allow', 'the file it reaches is src/a.ts');
    assert.equal(rules.decide('edit_file', { path: '/etc/hostname', old_string: 'a', new_string: 'b' }), undefined, 'a path the tool refuses is allowed by no rule');
  });

  test("Claude Code's spellings mean the same as savepoint's", async () => {
    const repo = await scratch.repo({ '.env': 'SECRET=1\n' });
    const root = realpathSync(repo.root);
    const rules = new PermissionRules({ deny: ['Bash(curl:*)', 'Read(./.env)', 'WebFetch(domain:evil.example)'], allow: ['Edit(src/**)', 'Write', 'Glob', 'mcp__tracker'], root });
    assert.equal(rules.decide('run_bash', bash('curl http://x'))?.verdict, 'deny');
    assert.equal(rules.decide('run_bash', bash('ls && curl http://x'))?.verdict, 'deny');
    for (const tool of ['read_file', 'list_files', 'search']) assert.equal(rules.decide(tool, { path: '.env', pattern: 'x' })?.verdict, 'deny', `Read covers ${tool}`);
    assert.equal(rules.decide('read_file', { path: join(root, '.env') })?.verdict, 'deny');
    assert.equal(rules.decide('web_fetch', { url: 'https://evil.example/x' })?.verdict, 'deny');
    assert.equal(rules.decide('web_fetch', { url: 'https://good.example/x' }), undefined);
    assert.equal(rules.decide('edit_file', { path: 'src/a.ts' })?.verdict, 'allow');
    assert.equal(rules.decide('write_file', { path: 'src/b.ts', content: '' })?.verdict, 'allow', 'Edit covers write_file too');
    assert.equal(rules.decide('list_files', {})?.verdict, 'allow');
    assert.equal(rules.decide('mcp__tracker__create_issue', { title: 'x' })?.verdict, 'allow', 'mcp__server covers its tools');
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
    assert.deepEqual(rules.decide('run_bash', bash('rm -rf build')), { verdict: 'deny', rule: 'run_bash(rm *)' });
    assert.deepEqual(rules.decide('run_bash', bash('ls')), { verdict: 'allow', rule: 'run_bash' });
    assert.equal(rules.decide('write_file', { path: 'a' }), undefined);
    rules.addAllow('write_file');
    assert.equal(rules.decide('write_file', { path: 'a' })?.verdict, 'allow');
  });

  test('a write to a file that decides what runs is allowed only by a rule from the user\'s own settings', async () => {
    const repo = await scratch.repo();
    const root = realpathSync(repo.root);
    mkdirSync(join(root, 'docs'));
    const write = (path: string) => ({ path, content: 'x' });
    const project = new PermissionRules({ allow: [{ rule: 'write_file', scope: 'project' }, { rule: 'edit_file', scope: 'local' }], root });
    project.addAllow('write_file(.savepoint/settings.json)');
    for (const path of ['.savepoint/settings.json', '.mcp.json', 'docs/AGENTS.md', 'CLAUDE.md', '.claude/settings.json', `${root}/.savepoint/x`, 'docs/../.mcp.json']) {
      assert.ok(writesControlFile('write_file', write(path), root), path);
      assert.equal(project.decide('write_file', write(path)), undefined, `${path}: the repository's rules and a session's do not allow it`);
    }
    assert.equal(project.decide('write_file', write('docs/guide.md'))?.verdict, 'allow');
    const user = new PermissionRules({ allow: [{ rule: 'write_file(.savepoint/**)', scope: 'user' }], root });
    assert.equal(user.decide('write_file', write('.savepoint/settings.json'))?.verdict, 'allow');
  });

  test('the rules `a` remembers are the narrowest that cover what was asked', async () => {
    assert.deepEqual(suggestRules('run_bash', bash('npm test')), ['run_bash(npm test)']);
    assert.deepEqual(suggestRules('run_bash', bash('  npm test --silent')), ['run_bash(npm test --silent)']);
    assert.deepEqual(suggestRules('run_bash', bash('npm ci && npm test')), ['run_bash(npm ci)', 'run_bash(npm test)']);
    assert.deepEqual(suggestRules('run_bash', bash('ls *.ts')), ['run_bash(ls \\*.ts)'], 'a glob character in the command is escaped');
    assert.deepEqual(suggestRules('run_bash', bash('eval x')), [], 'a line no rule can judge: nothing to remember');
    assert.deepEqual(suggestRules('edit_file', { path: 'src/cli/a.ts' }), ['edit_file(src/cli/a.ts)']);
    assert.deepEqual(suggestRules('write_file', { path: './notes.txt' }), ['write_file(notes.txt)']);
    assert.deepEqual(suggestRules('write_file', { path: '.savepoint/settings.json' }), [], 'a file that decides what runs asks every time');
    assert.deepEqual(suggestRules('mcp__s__t', {}), ['mcp__s__t']);
    assert.deepEqual(suggestRules('web_fetch', { url: 'https://Docs.Example.com/guide?page=2' }), ['web_fetch(domain:docs.example.com)'], 'a fetch: its domain');
    assert.deepEqual(suggestRules('web_fetch', { url: 'not a url' }), [], 'no domain: nothing to remember');
    const rules = new PermissionRules();
    for (const rule of suggestRules('run_bash', bash('npm test'))) rules.addAllow(rule);
    assert.equal(rules.decide('run_bash', bash('npm test'))?.verdict, 'allow');
    assert.equal(rules.decide('run_bash', bash('npm test; touch x')), undefined);
    assert.equal(rules.decide('run_bash', bash('npm install evil')), undefined);
  });

  test('a malformed rule, or one that names no tool, says what is wrong with it', () => {
    assert.match(parseRule('run_bash(').problem ?? '', /is not a rule/);
    assert.match(parseRule('run_bash()').problem ?? '', /empty parentheses/);
    assert.match(parseRule('Bsh(ls)').problem ?? '', /names no tool: "Bsh"/);
    assert.match(parseRule('WebSearch').problem ?? '', /names no tool/);
    for (const rule of ['run_bash(npm test*)', 'Bash(npm test:*)', 'Read(./.env)', 'Edit(src/**)', 'Write', 'WebFetch(domain:example.com)', 'Glob', 'Grep', 'mcp__x__y', 'mcp__x', '*_file']) {
      assert.equal(parseRule(rule).problem, undefined, rule);
    }
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
    assert.equal(refused({ permissions: { deny: ['write_file', 'bad('] } }).data.key, 'permissions.deny[1]');
    const unknown = refused({ permissions: { allow: ['run_bash', 'Bsh(curl:*)'] } });
    assert.equal(unknown.data.key, 'permissions.allow[1]', 'a rule that names no tool is refused by name');
    assert.match(unknown.message, /\/x\/settings\.json cannot be used: "permissions\.allow\[1\]" names no tool: "Bsh"/);
    assert.equal(refused({ permissions: { defaultMode: 'always' } }).data.key, 'permissions.defaultMode');
    assert.equal(refused({ sandbox: { network: 'yes' } }).data.key, 'sandbox.network');
    for (const remote of ['', '--upload-pack=evil', 'a b', 3, 'up/../x']) assert.equal(refused({ remote }).data.key, 'remote', `remote ${JSON.stringify(remote)}`);
    assert.equal(parseSettings({ remote: 'origin' }, 'f').remote, 'origin');
    assert.equal(refused({ mcpServers: { s: { args: [] } } }).data.key, 'mcpServers.s');
    assert.match(refused([]).message, /\/x\/settings\.json/);
    // hooks: every level of Claude Code's shape is checked and named.
    const group = (hook: unknown, matcher: unknown = 'run_bash') => ({ hooks: { PreToolUse: [{ matcher, hooks: [hook] }] } });
    assert.equal(refused({ hooks: [] }).data.key, 'hooks');
    assert.equal(refused({ hooks: { Notification: [] } }).data.key, 'hooks.Notification');
    assert.equal(refused({ hooks: { Stop: {} } }).data.key, 'hooks.Stop');
    assert.equal(refused(group({ type: 'command', command: 'x' }, '(')).data.key, 'hooks.PreToolUse[0].matcher');
    assert.equal(refused(group({ type: 'prompt', prompt: 'x' })).data.key, 'hooks.PreToolUse[0].hooks[0].type');
    assert.equal(refused(group({ type: 'command', command: ' ' })).data.key, 'hooks.PreToolUse[0].hooks[0].command');
    assert.equal(refused(group({ type: 'command', command: 'x', timeout: 0 })).data.key, 'hooks.PreToolUse[0].hooks[0].timeout');
    assert.equal(refused(group({ type: 'command', command: 'x', async: true })).data.key, 'hooks.PreToolUse[0].hooks[0].async');
    assert.deepEqual(parseSettings(group({ type: 'command', command: './check.sh' }, 'Edit|Write'), 'f').hooks, [{ event: 'PreToolUse', matcher: 'Edit|Write', command: './check.sh', timeout: 60 }]);
  });

  test('MCP servers pass through as written, and unknown keys are kept aside rather than refused', () => {
    const layer = parseSettings({ mcpServers: { gh: { command: 'gh-mcp', args: ['--stdio'], env: { A: 'b' } }, web: { type: 'http', url: 'http://x' } }, statusLine: {} }, 'f');
    assert.deepEqual(layer.mcpServers, { gh: { command: 'gh-mcp', args: ['--stdio'], env: { A: 'b' } }, web: { type: 'http', url: 'http://x' } });
    assert.deepEqual(layer.unknownKeys, ['statusLine']);
  });
});
