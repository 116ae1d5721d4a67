// Settings through the real CLI, with HOME and XDG_CONFIG_HOME pointed at temp folders: an allowed
// command runs with no terminal and no --yes; a write no rule allows stops the run before the file
// is written; a deny rule holds under --yes and the run finishes, the model told why; the user
// file's model is what a new run asks for; a broken file is named with its key and nothing runs;
// `savepoint config` shows each value with the file it came from; defaultMode yes (under a deny rule)
// and acceptEdits with no terminal; settings' sandbox switches reach the run's sandbox. A project's
// own settings that widen what runs take effect only in a folder the person trusts (docs/trust.md):
// those tests trust it, with --trust or a record in the trust store (trust.test.ts covers the rest).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertOneParagraph, fakeEnv, git, gitOut, lastToolResults, resultText, runCli } from '../helpers/cli.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import { trustFolder, userHomeIn } from '../helpers/trust.js';

const scratch = useScratch();

// A home and user config folder of its own for each run, with `settings` in it (none when undefined).
const userHome = (settings?: unknown) => userHomeIn(scratch, settings);

function projectSettings(root: string, settings: unknown, file = 'settings.json'): string {
  mkdirSync(join(root, '.savepoint'), { recursive: true });
  const path = join(root, '.savepoint', file);
  writeFileSync(path, typeof settings === 'string' ? settings : JSON.stringify(settings));
  return path;
}

// `--model script:<file>` answering `turns`: for the runs whose requests the test does not look at
// (no HTTP model server: a run on one costs about twice the CPU).
function scriptModel(turns: ScriptTurn[]): string[] {
  const file = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return ['--model', `script:${file}`];
}

describe('settings', { concurrency: true }, () => {
  // One run for both: the allowed command runs unasked, then the write no rule covers stops it.
  test('a command an allow rule covers runs with no terminal and no --yes; a write no rule allows then stops the run before anything is written', async () => {
    const repo = await scratch.repo();
    projectSettings(repo.root, { permissions: { allow: ['run_bash(echo *)'] } });
    const fake = await scratch.fake([
      { tools: [{ name: 'run_bash', input: { command: 'echo allowed > out.txt' } }] },
      { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'x\n' } }] },
      { text: 'Done.' },
    ]);
    const result = await runCli(['run', '--trust', '--no-sandbox', 'write out, then notes'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHome() } });
    assert.equal(readFileSync(join(repo.root, 'out.txt'), 'utf8'), 'allowed\n', 'the allowed command ran with no terminal and no --yes');
    assert.equal(result.code, 1, result.stderr);
    assert.match(assertOneParagraph(result.stderr), /write_file notes\.txt/);
    assertNoStack(result.stderr);
    assert.equal(existsSync(join(repo.root, 'notes.txt')), false);
    assert.equal(fake.requests.length, 2, 'the model was asked again after the command, and not after the refused write');
  });

  test('a deny rule holds under --yes: the model gets an is_error result naming the rule, and the run finishes', async () => {
    const repo = await scratch.repo({ 'keep.txt': 'keep\n' });
    const home = userHome({ permissions: { deny: ['run_bash(rm *)'] } });
    const fake = await scratch.fake([{ tools: [{ name: 'run_bash', input: { command: 'rm keep.txt' } }] }, { text: 'I was not allowed to remove it.' }]);
    const result = await runCli(['run', '--yes', '--no-sandbox', 'remove keep'], { cwd: repo.root, env: { ...fakeEnv(fake), ...home } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(join(repo.root, 'keep.txt'), 'utf8'), 'keep\n');
    const [denied] = lastToolResults(fake.requests[1]!);
    assert.equal(denied?.is_error, true);
    assert.match(resultText(denied!), /deny it \(rule "run_bash\(rm \*\)"\)/);
    assert.match(result.stdout, /Final answer\nI was not allowed to remove it\./);
    // Replayed, the denied step is the recorded answer: no rule is asked and nothing runs.
    const again = await runCli(['run', 'remove keep'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHome() } });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(fake.requests.length, 2);
  });

  test("the user file's model is what a new run asks for when --model is not given; the local file overrides it", async () => {
    const repo = await scratch.repo();
    const fake = await scratch.fake([{ text: 'Hello.' }, { text: 'Hello again.' }]);
    const home = userHome({ model: 'claude-from-user-settings' });
    const first = await runCli(['run', 'say hello'], { cwd: repo.root, env: { ...fakeEnv(fake), ...home } });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(fake.requests[0]!.model, 'claude-from-user-settings');
    projectSettings(repo.root, { model: 'claude-from-local-settings' }, 'settings.local.json');
    const second = await runCli(['run', 'say hello again'], { cwd: repo.root, env: { ...fakeEnv(fake), ...home } });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(fake.requests[1]!.model, 'claude-from-local-settings');
  });

  test('a settings file that does not parse, or has a key of the wrong type, is named and nothing runs', async () => {
    const repo = await scratch.repo();
    const fake = await scratch.fake([{ text: 'never' }]);
    const broken = projectSettings(repo.root, '{ "model": ');
    const result = await runCli(['run', '--yes', 'anything'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHome() } });
    assert.equal(result.code, 1);
    const paragraph = assertOneParagraph(result.stderr);
    assert.ok(paragraph.includes(broken), paragraph);
    assert.match(paragraph, /not valid JSON/);
    assertNoStack(result.stderr);

    const home = userHome({ permissions: { allow: 'write_file' } });
    const typed = await runCli(['continue', '--yes', 'anything'], { cwd: repo.root, env: { ...fakeEnv(fake), ...home } });
    assert.equal(typed.code, 1);
    assert.match(assertOneParagraph(typed.stderr), /settings\.json cannot be used: "permissions\.allow" must be a list/);
    assert.equal(fake.requests.length, 0);
    assert.notEqual((await git(repo.root, ['rev-parse', '--verify', '-q', 'agent-journal'])).code, 0, 'no journal was written');
  });

  test('savepoint config shows each setting with the file it came from, and --json the same for scripts', async () => {
    const repo = await scratch.repo();
    const home = userHome({ model: 'claude-user', permissions: { allow: ['run_bash(npm test*)'] }, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }] }, statusLine: {} });
    const project = projectSettings(repo.root, { permissions: { deny: ['write_file(secrets/**)'], defaultMode: 'acceptEdits' }, sandbox: { network: true } });
    const local = projectSettings(repo.root, { model: 'claude-local', mcpServers: { gh: { command: 'gh-mcp', args: ['--stdio'] } } }, 'settings.local.json');
    const user = join(home.XDG_CONFIG_HOME, 'savepoint', 'settings.json');
    trustFolder(repo.root, home.XDG_CONFIG_HOME);
    const shown = await runCli(['config'], { cwd: repo.root, env: home });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`model +claude-local  from ${local}`));
    assert.match(shown.stdout, new RegExp(`permissions\\.allow +run_bash\\(npm test\\*\\)  from ${user}`));
    assert.match(shown.stdout, new RegExp(`permissions\\.deny +write_file\\(secrets/\\*\\*\\)  from ${project}`));
    assert.match(shown.stdout, /permissions\.defaultMode +acceptEdits/);
    assert.match(shown.stdout, /mcpServers\.gh +gh-mcp --stdio/);
    assert.match(shown.stdout, new RegExp(`hooks\\.PreToolUse +"Bash": \\./check\\.sh  from ${user}`));
    assert.match(shown.stdout, /"statusLine" in .* is not a savepoint setting/);

    const json = JSON.parse((await runCli(['config', '--json'], { cwd: repo.root, env: home })).stdout) as Record<string, any>;
    assert.deepEqual(json.model, { value: 'claude-local', source: local });
    assert.deepEqual(json.permissions.defaultMode, { value: 'acceptEdits', source: project });
    assert.deepEqual(json.sandbox.network, { value: true, source: project });
    assert.deepEqual(json.files.map((f: { scope: string; found: boolean }) => `${f.scope}:${f.found}`), ['user:true', 'project:true', 'local:true']);
  });

  // One run for both: the write goes through unasked, then the command stops the run.
  test('defaultMode acceptEdits writes without asking, also with no terminal, and still asks for a command', async () => {
    const repo = await scratch.repo();
    projectSettings(repo.root, { permissions: { defaultMode: 'acceptEdits' } });
    const model = scriptModel([
      { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'x\n' } }] },
      { tools: [{ name: 'run_bash', input: { command: 'echo no > out.txt' } }] },
      { text: 'Done.' },
    ]);
    const result = await runCli(['run', '--trust', '--no-sandbox', ...model, 'write notes, then a command'], { cwd: repo.root, env: userHome() });
    assert.equal(readFileSync(join(repo.root, 'notes.txt'), 'utf8'), 'x\n');
    assert.equal(result.code, 1, result.stderr);
    assert.match(assertOneParagraph(result.stderr), /run_bash/);
    assert.equal(existsSync(join(repo.root, 'out.txt')), false);
  });

  test('defaultMode yes runs commands and writes with no terminal and no --yes, and a deny rule still wins over it', async () => {
    const repo = await scratch.repo();
    projectSettings(repo.root, { permissions: { defaultMode: 'yes', deny: ['run_bash(rm *)'] } });
    const fake = await scratch.fake([
      { tools: [{ name: 'run_bash', input: { command: 'echo ran > out.txt' } }, { name: 'write_file', input: { path: 'notes.txt', content: 'x\n' } }, { name: 'run_bash', input: { command: 'rm README.md' } }] },
      { text: 'Done.' },
    ]);
    const result = await runCli(['run', '--trust', '--no-sandbox', 'run, write, remove'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHome() } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(join(repo.root, 'out.txt'), 'utf8'), 'ran\n');
    assert.equal(readFileSync(join(repo.root, 'notes.txt'), 'utf8'), 'x\n');
    assert.equal(existsSync(join(repo.root, 'README.md')), true, 'the denied command did not run');
    assert.match(resultText(lastToolResults(fake.requests.at(-1)!)[2]!), /run_bash\(rm \*\)/);
  });

  test("settings' sandbox switches open the sandbox as the flags do, and the run records them", { skip: noSandboxReason() }, async () => {
    const repo = await scratch.repo();
    projectSettings(repo.root, { sandbox: { network: true, gitWrites: true } });
    const model = scriptModel([{ tools: [{ name: 'run_bash', input: { command: 'echo x > made.txt && git add made.txt && git commit -qm "agent commit"' } }] }, { text: 'Done.' }]);
    const result = await runCli(['run', '--trust', '--yes', ...model, 'commit in the sandbox'], { cwd: repo.root, env: userHome() });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /commands run in a sandbox: network allowed; writable: the working tree \(\.git too\)/);
    assert.equal((await gitOut(repo.root, ['log', '-1', '--format=%s'])), 'agent commit');
    const runs = (await gitOut(repo.root, ['ls-tree', '--name-only', 'agent-journal:runs'])).split('\n');
    const record = JSON.parse(await gitOut(repo.root, ['show', `agent-journal:runs/${runs[0]}/run.json`])) as { sandbox: unknown };
    assert.deepEqual(record.sandbox, { kind: 'bwrap', network: true, gitWrites: true });
  });

  test("settings' mcpServers reach the MCP configuration: mcp list names the server and the settings file it came from", async () => {
    const repo = await scratch.repo();
    const home = userHome();
    const file = projectSettings(repo.root, { mcpServers: { ghost: { command: 'no-such-mcp-server-binary' } } });
    trustFolder(repo.root, home.XDG_CONFIG_HOME);
    const listed = await runCli(['mcp', 'list', '--json'], { cwd: repo.root, env: home });
    const servers = (JSON.parse(listed.stdout) as { servers: Array<{ name: string; source: string; starts: boolean }> }).servers;
    assert.deepEqual(servers.map((s) => [s.name, s.source, s.starts]), [['ghost', file, false]]);
  });
});
