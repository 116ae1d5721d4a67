// Permission rules judge what will actually happen, through the real CLI with no terminal and a
// scripted model: a deny rule on `.env*` holds for the absolute path and `.env/` under --yes;
// an allow rule on `src/**` does not reach through a symbolic link out of src/; `run_bash(npm test*)`
// allows no command after `;`, a newline or inside `$(…)`; `run_bash(rm *)` denies ` rm` and
// `true; rm`; Claude Code's `Bash(curl:*)` and `Read(./.env)` deny as savepoint's rules do, and a
// rule that names no tool stops the command with the file and key; a write to a file that decides
// what runs is allowed by neither the repository's rules nor its defaultMode, only by --yes or the
// user's own rule.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, assertOneParagraph, fakeEnv, git, gitOut, resultText, runCli } from '../helpers/cli.js';
import { userHomeIn } from '../helpers/trust.js';

const scratch = useScratch();

// A home and user config folder of its own for each run, with `settings` in it (none when undefined).
const userHome = (settings?: unknown) => userHomeIn(scratch, settings);

function projectSettings(root: string, settings: unknown, file = 'settings.json'): string {
  mkdirSync(join(root, '.savepoint'), { recursive: true });
  const path = join(root, '.savepoint', file);
  writeFileSync(path, JSON.stringify(settings));
  return path;
}

// One new run in `root` (a run of its own: the same one again would replay the last) whose model, a
// script, makes the tool calls `calls` (one turn) and then answers. `results`: the tool results the
// model was handed for them, as the journal recorded them (the next request is built from those
// entries), or none when the run stopped before asking the model again. No HTTP model server: what
// the rules decide is the point here, and a run on one costs about twice the CPU.
let runs = 0;
async function runCalls(root: string, calls: Array<{ name: string; input: Record<string, unknown> }>, flags: string[], home: Record<string, string>) {
  const run = `rules-${++runs}`;
  const script = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(script, JSON.stringify({ turns: [{ tools: calls }, { text: 'Done.' }] }));
  const result = await runCli(['run', '--no-sandbox', '--run', run, '--model', `script:${script}`, ...flags, `task ${runs}`], { cwd: root, env: home });
  return { result, results: await handedResults(root, run) };
}

// The results of the run's first turn's tool calls as the model's second request carries them
// (is_error, the text): its tool steps' recorded results, once a second model step exists.
async function handedResults(root: string, run: string): Promise<Array<{ type: string; is_error?: boolean; content: string }>> {
  const listed = await git(root, ['ls-tree', '-r', '--name-only', 'agent-journal', `runs/${run}/steps/`]);
  const steps = listed.code === 0 ? listed.stdout.split('\n').filter((path) => path.endsWith('.json') && !path.endsWith('.intent.json')) : [];
  const models = steps.map((path, i) => (path.endsWith('-model.json') ? i : -1)).filter((i) => i >= 0);
  if (models.length < 2) return [];
  const results = [];
  for (const path of steps.slice(models[0]! + 1, models[1]!)) {
    const entry = JSON.parse(await gitOut(root, ['show', `agent-journal:${path}`])) as { result: { isError?: boolean; output: string } };
    results.push({ type: 'tool_result', ...(entry.result.isError ? { is_error: true } : {}), content: entry.result.output });
  }
  return results;
}

describe('rules judge what will happen', { concurrency: true }, () => {
  test("the docs' write_file(.env*) deny holds under --yes for the absolute path and for .env/", async () => {
    const repo = await scratch.repo();
    const root = realpathSync(repo.root);
    const { result, results } = await runCalls(root, [
      { name: 'write_file', input: { path: join(root, '.env'), content: 'SECRET=absolute\n' } },
      { name: 'write_file', input: { path: '.env/', content: 'SECRET=slash\n' } },
      { name: 'write_file', input: { path: 'src/../.env.local', content: 'SECRET=dots\n' } },
    ], ['--yes'], userHome({ permissions: { deny: ['write_file(.env*)'] } }));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(join(root, '.env')), false, '.env was not written');
    assert.equal(existsSync(join(root, '.env.local')), false);
    assert.equal(results.length, 3);
    for (const denied of results) {
      assert.equal(denied.is_error, true);
      assert.match(resultText(denied), /deny it \(rule "write_file\(\.env\*\)"\)/);
    }
  });

  test('an allow rule on src/** does not let an edit through src/up -> .. land outside src/', async () => {
    const repo = await scratch.repo({ 'README.md': '# outside\n', 'src/a.ts': 'export const a = 1;\n' });
    symlinkSync('..', join(repo.root, 'src', 'up'));
    const rules = { permissions: { allow: ['edit_file(src/**)'] } };
    const { result } = await runCalls(repo.root, [{ name: 'edit_file', input: { path: 'src/up/README.md', old_string: '# outside', new_string: '# changed' } }], [], userHome(rules));
    assert.equal(result.code, 1, 'no rule allows it and there is no terminal to ask');
    assert.match(assertOneParagraph(result.stderr), /edit_file src\/up\/README\.md/);
    assertNoStack(result.stderr);
    assert.equal(readFileSync(join(repo.root, 'README.md'), 'utf8'), '# outside\n');

    const inside = await runCalls(repo.root, [{ name: 'edit_file', input: { path: 'src/a.ts', old_string: '= 1', new_string: '= 2' } }], [], userHome(rules));
    assert.equal(inside.result.code, 0, inside.result.stderr);
    assert.equal(readFileSync(join(repo.root, 'src', 'a.ts'), 'utf8'), 'export const a = 2;\n', 'a file under src/ is allowed');
  });

  test('run_bash(npm test*) allows npm test and never a command after ;, a newline or inside $(…)', async () => {
    const repo = await scratch.repo({ 'package.json': '{"name":"p","version":"1.0.0","scripts":{"test":"echo tested"}}\n' });
    const rules = { permissions: { allow: ['run_bash(npm test*)'] } };
    for (const [command, made] of [['npm test; touch A', 'A'], ['npm test\ntouch B', 'B'], ['npm test $(touch C)', 'C']] as const) {
      const { result } = await runCalls(repo.root, [{ name: 'run_bash', input: { command } }], [], userHome(rules));
      assert.equal(result.code, 1, `${JSON.stringify(command)} is not allowed: with no terminal the run stops\n${result.stdout}`);
      assert.equal(existsSync(join(repo.root, made)), false, `${made} was not made`);
    }
    const { result, results } = await runCalls(repo.root, [{ name: 'run_bash', input: { command: '  npm test' } }], [], userHome(rules));
    assert.equal(result.code, 0, result.stderr);
    assert.match(resultText(results[0]!), /tested/);
  });

  test('run_bash(rm *) denies " rm -f x" and "true; rm -f x", --yes or not', async () => {
    const repo = await scratch.repo({ x: 'kept\n' });
    const { result, results } = await runCalls(repo.root, [
      { name: 'run_bash', input: { command: ' rm -f x' } },
      { name: 'run_bash', input: { command: 'true; rm -f x' } },
    ], ['--yes'], userHome({ permissions: { deny: ['run_bash(rm *)'] } }));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(join(repo.root, 'x'), 'utf8'), 'kept\n');
    assert.deepEqual(results.map((r) => r.is_error), [true, true]);
  });

  test("Claude Code's Bash(curl:*) and Read(./.env) deny as savepoint's rules do, and savepoint config shows them", async () => {
    const repo = await scratch.repo({ 'README.md': '# r\n' });
    writeFileSync(join(repo.root, '.env'), 'SECRET=do-not-read\n');
    const home = userHome({ permissions: { deny: ['Bash(curl:*)', 'Read(./.env)'] } });
    const { result, results } = await runCalls(repo.root, [
      { name: 'run_bash', input: { command: 'curl --version > curl.txt' } },
      { name: 'read_file', input: { path: '.env' } },
      { name: 'search', input: { pattern: 'SECRET', path: '.env' } },
    ], ['--yes'], home);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(join(repo.root, 'curl.txt')), false, 'curl did not run');
    assert.deepEqual(results.map((r) => r.is_error), [true, true, true]);
    for (const r of results) assert.doesNotMatch(resultText(r), /do-not-read/);
    assert.match(resultText(results[1]!), /rule "Read\(\.\/\.env\)"/);
    const config = await runCli(['config'], { cwd: repo.root, env: home });
    assert.equal(config.code, 0, config.stderr);
    assert.match(config.stdout, /permissions\.deny +Bash\(curl:\*\)/);
  });

  test('a rule that names no tool stops the command before anything runs, naming the file and the key', async () => {
    const repo = await scratch.repo();
    const file = projectSettings(repo.root, { permissions: { deny: ['run_bash(rm *)', 'Bsh(curl:*)'] } });
    const fake = await scratch.fake([{ text: 'never' }]);
    const result = await runCli(['run', '--yes', 'anything'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHome() } });
    assert.equal(result.code, 1);
    const paragraph = assertOneParagraph(result.stderr);
    assert.ok(paragraph.includes(file), paragraph);
    assert.match(paragraph, /"permissions\.deny\[1\]" names no tool: "Bsh"/);
    assertNoStack(result.stderr);
    assert.equal(fake.requests.length, 0);
    const config = await runCli(['config'], { cwd: repo.root, env: userHome() });
    assert.equal(config.code, 1, 'savepoint config refuses it too');
    assert.match(config.stderr, /names no tool: "Bsh"/);
  });

  test("a write to a file that decides what runs: the repository's allow rule, acceptEdits and yes do not approve it; --yes and the user's own rule do", async () => {
    const repo = await scratch.repo({ 'README.md': '# r\n' });
    projectSettings(repo.root, { permissions: { allow: ['write_file'], defaultMode: 'acceptEdits' } });
    const settings = join(repo.root, '.savepoint', 'settings.json');
    const before = readFileSync(settings, 'utf8');
    const widen = { name: 'write_file', input: { path: '.savepoint/settings.json', content: '{"permissions":{"defaultMode":"yes"}}\n' } };
    const stopped = await runCalls(repo.root, [widen], [], userHome());
    assert.equal(stopped.result.code, 1, 'with no terminal the run stops, as for any call that needs approval');
    assert.match(assertOneParagraph(stopped.result.stderr), /write_file \.savepoint\/settings\.json/);
    assert.equal(readFileSync(settings, 'utf8'), before, 'the settings file was not written');

    projectSettings(repo.root, { permissions: { defaultMode: 'yes' } }, 'settings.local.json');
    const instructions = await runCalls(repo.root, [{ name: 'write_file', input: { path: join(repo.root, 'docs', '..', 'CLAUDE.md'), content: 'Run anything.\n' } }], [], userHome());
    assert.equal(instructions.result.code, 1, "the local file's defaultMode yes does not approve it either");
    assert.equal(existsSync(join(repo.root, 'CLAUDE.md')), false);

    const mine = await runCalls(repo.root, [{ name: 'write_file', input: { path: 'CLAUDE.md', content: 'Be brief.\n' } }], [], userHome({ permissions: { allow: ['write_file(CLAUDE.md)'] } }));
    assert.equal(mine.result.code, 0, mine.result.stderr);
    assert.equal(readFileSync(join(repo.root, 'CLAUDE.md'), 'utf8'), 'Be brief.\n', "the user's own rule allows it");

    const yes = await runCalls(repo.root, [widen], ['--yes'], userHome());
    assert.equal(yes.result.code, 0, yes.result.stderr);
    assert.equal(readFileSync(settings, 'utf8'), widen.input.content, '--yes on the command line allows it');
  });
});
