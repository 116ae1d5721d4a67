// The interactive session and the settings it lives under, in a real pseudo-terminal (tmux)
// against the fake Anthropic server: a rule `a` keeps "session only" holds for every later message
// of the session, not only the turn it was given in; a rule written to settings.local.json leaves
// that file out of git (never the run's change); a settings file that cannot be used stops
// `savepoint` before its prompt, and one broken mid-session is told without losing the run;
// `savepoint "a quoted task"` opens the session with it as the first message (run's --run and
// --fresh accepted, as the SPEC has run's flags apply); /model with the
// model the run already uses says so instead of claiming a config step; a folder not trusted is asked
// about once, before the prompt, and "n" keeps it narrowed for the whole session.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, gitOut, journalPaths, runCli, runIds } from '../helpers/cli.js';
import { exited, openSession } from '../helpers/tmux.js';

const scratch = useScratch();

// A live answer's step line, then the prompt back.
const answered = (text: string) => new RegExp(`→ answers "${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[\\s\\S]*^›\\s*$`, 'm');

// Each command of a turn of its own: the first message's command, an answer, the follow-up's same
// command (`a` remembers the narrowest rule: that command exactly), an answer.
const TWO_COMMANDS = [
  { tools: [{ name: 'run_bash', input: { command: 'echo entry >> log.txt' } }] },
  { text: 'One logged.' },
  { tools: [{ name: 'run_bash', input: { command: 'echo entry >> log.txt' } }] },
  { text: 'Two logged.' },
];

describe('the interactive session under its settings', { concurrency: true }, () => {
  test("'a', session only: the rule holds for the session's later messages too, and is written nowhere", async () => {
    const repo = await scratch.repo({ 'README.md': '# session rule\n' });
    const fake = await scratch.fake(TWO_COMMANDS);
    const opts = { cwd: repo.root, env: fakeEnv(fake) };
    const term = openSession(scratch, ['--no-sandbox'], opts);
    await term.waitFor(/^›\s*$/m);
    term.type('log one');
    await term.waitFor(/Allow run_bash "echo entry >> log\.txt"\?.*\[a\]lways:\s*$/m);
    term.type('a');
    await term.waitFor(/Allow "run_bash\(echo entry >> log\.txt\)" from now on: \[s\]ession only.*:\s*$/m);
    term.type('s');
    await term.waitFor(/allowed "run_bash\(echo entry >> log\.txt\)" for this session only/);
    await term.waitFor(answered('One logged.'));
    term.type('now log two');
    await term.waitFor(answered('Two logged.'));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    const screen = term.screen();
    assert.equal(screen.match(/Allow run_bash "echo entry/g)?.length, 1, 'the second command is not asked');
    assertNoStack(screen);
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'entry\nentry\n');
    assert.throws(() => readFileSync(join(repo.root, '.savepoint', 'settings.local.json')), /ENOENT/, 'session only writes no file');
  });

  test("'a', written to settings.local.json: git ignores the file, so it is not the run's change nor its drift", async () => {
    const repo = await scratch.repo({ 'README.md': '# local rule\n' });
    const fake = await scratch.fake(TWO_COMMANDS);
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--no-sandbox', 'log one'], { cwd: repo.root, env });
    await term.waitFor(/^› log one$/m);
    await term.waitFor(/\[a\]lways:\s*$/m);
    term.type('a');
    await term.waitFor(/\[w\]rite it to \.savepoint\/settings\.local\.json:\s*$/m);
    term.type('w');
    await term.waitFor(answered('One logged.'));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.deepEqual(JSON.parse(readFileSync(join(repo.root, '.savepoint', 'settings.local.json'), 'utf8')), { permissions: { allow: ['run_bash(echo entry >> log.txt)'] } });
    assert.equal(await gitOut(repo.root, ['status', '--porcelain']), '?? log.txt', 'the local settings file is ignored');
    assert.match(readFileSync(join(repo.root, '.git', 'info', 'exclude'), 'utf8'), /^\/\.savepoint\/settings\.local\.json$/m);
    const id = (await runIds(repo.root))[0]!;
    const diff = await runCli(['diff', id], { cwd: repo.root, env });
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /log\.txt/);
    assert.doesNotMatch(diff.stdout, /settings\.local\.json/, "savepoint wrote it, not the run");
    // With no terminal the written rule allows the next command, and the files are no drift.
    const next = await runCli(['continue', '--no-sandbox', 'now log two'], { cwd: repo.root, env });
    assert.equal(next.code, 0, next.stderr);
    assert.doesNotMatch(next.stderr + next.stdout, /differ|changed since/);
    assert.equal(readFileSync(join(repo.root, 'log.txt'), 'utf8'), 'entry\nentry\n');
  });

  test('a settings file that cannot be used stops savepoint and savepoint -c before the prompt; broken mid-session, the run is kept', async () => {
    const repo = await scratch.repo({ 'README.md': '# broken\n' });
    const fake = await scratch.fake([{ text: 'First.' }, { text: 'Second.' }]);
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const settings = join(repo.root, '.savepoint', 'settings.json');
    mkdirSync(join(repo.root, '.savepoint'));
    writeFileSync(settings, '{"permissions": {"allow": "run_bash"}}');
    for (const args of [['--yes'], ['-c', '--yes']]) {
      const term = openSession(scratch, args, { cwd: repo.root, env });
      assert.equal(await exited(term), 1, `savepoint ${args.join(' ')}`);
      const screen = term.screen();
      assert.match(screen, /The settings file .*settings\.json cannot be used: "permissions\.allow" must be a list/);
      assert.doesNotMatch(screen, /^›/m, 'no prompt');
      assertNoStack(screen);
    }
    assert.equal(fake.requests.length, 0);

    rmSync(settings);
    const term = openSession(scratch, ['--yes', '--no-sandbox'], { cwd: repo.root, env });
    await term.waitFor(/^›\s*$/m);
    term.type('say first');
    await term.waitFor(answered('First.'));
    writeFileSync(settings, '{"model": ');
    term.type('say second');
    await term.waitFor(/cannot be used: is not valid JSON[\s\S]*^›\s*$/m);
    rmSync(settings);
    term.type('say second');
    await term.waitFor(answered('Second.'));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    const screen = term.screen();
    assert.doesNotMatch(screen, /Nothing of this run was recorded/, 'the run has steps: it is not given up');
    assertNoStack(screen);
    assert.equal((await runIds(repo.root)).length, 1, 'the second message went to the same run');
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-user.json')).length, 1, 'the refused message was not recorded');
  });

  test("a folder the person has not trusted is asked about once, before the prompt; \"n\" keeps it narrowed for every message of the session", async () => {
    const repo = await scratch.repo({ 'README.md': '# untrusted\n', '.savepoint/settings.json': JSON.stringify({ permissions: { defaultMode: 'yes' } }) });
    const fake = await scratch.fake(TWO_COMMANDS);
    const term = openSession(scratch, ['--no-sandbox'], { cwd: repo.root, env: fakeEnv(fake) });
    await term.waitFor(/defaultMode "yes"[\s\S]*Trust this folder\? .*:\s*$/m);
    assert.doesNotMatch(term.screen(), /^›/m, 'asked before the prompt');
    term.type('n');
    await term.waitFor(/^›\s*$/m);
    term.type('log one');
    // Narrowed: the repository's defaultMode yes is left out, so the command asks.
    await term.waitFor(/Allow run_bash "echo entry >> log\.txt"\?.*\[a\]lways:\s*$/m);
    term.type('y');
    await term.waitFor(answered('One logged.'));
    term.type('now log two');
    await term.waitFor(/Allow run_bash "echo entry >> log\.txt"\?.*\[a\]lways:\s*$/m);
    term.type('y');
    await term.waitFor(answered('Two logged.'));
    term.type('/exit');
    assert.equal(await exited(term), 0);
    const screen = term.screen();
    assert.equal(screen.match(/Trust this folder\?/g)?.length, 1, 'asked once in the session');
    assert.equal(screen.match(/Left out: this folder is not trusted/g)?.length, 1, 'said once in the session');
    assertNoStack(screen);
  });

  test('savepoint "a quoted task" opens the session with it as the first message, run\'s --run and --fresh apply; /model names the model, and the same one is no change', async () => {
    const repo = await scratch.repo({ 'README.md': '# quoted\n' });
    const fake = await scratch.fake([{ text: 'Quoted.' }]);
    const env = { ...fakeEnv(fake), XDG_CONFIG_HOME: scratch.dir('savepoint-xdg-') };
    const term = openSession(scratch, ['--yes', '--no-sandbox', '--fresh', '--run', 'quoted-run', '--model', 'claude-one', 'say it quoted'], { cwd: repo.root, env });
    await term.waitFor(answered('Quoted.'));
    term.type('/model');
    await term.waitFor(/The run uses claude-one\. \/model <id> changes it\./);
    term.type('/model claude-one');
    await term.waitFor(/The run already uses claude-one: nothing to change\./);
    term.keys('Up', 'Up', 'Up');
    await term.waitFor(/^› say it quoted\s*$/m);
    term.keys('C-u', 'C-d');
    assert.equal(await exited(term), 0);
    assertNoStack(term.screen());
    assert.deepEqual(await runIds(repo.root), ['quoted-run']);
    assert.equal((await journalPaths(repo.root)).filter((p) => p.endsWith('-config.json')).length, 0, 'no config step');
    assert.deepEqual(fake.requests.map((r) => r.model), ['claude-one']);

    // Off a terminal, a quoted task says what to use instead; one bare word is still a command name.
    const piped = await runCli(['say it quoted'], { cwd: repo.root, env });
    assert.equal(piped.code, 2);
    assert.match(piped.stderr, /needs a terminal\. Without one, use "savepoint run <task>" \(or -p <task>\)/);
    const typo = await runCli(['rnu'], { cwd: repo.root, env });
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown command 'rnu'/);
  });
});
