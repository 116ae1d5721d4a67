// The CLI's arguments as the commands read them, and the program built in-process: `savepoint` alone
// on a terminal or with options only is the session, `-p <task>` is `run`, a quoted task opens a
// session with it; the program loads only the command named (all of them for help or a typo), hides
// the session, and turns every parse error into savepoint's usage error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProgram, sessionArgv } from '../../src/cli/main.js';
import { UsageError } from '../../src/errors/index.js';

const argv = (...args: string[]) => ['node', 'savepoint', ...args];

test('a command named is left as it is', () => {
  assert.deepEqual(sessionArgv(argv('run', 'fix it')), argv('run', 'fix it'));
  assert.deepEqual(sessionArgv(argv('log', '-p')), argv('log', '-p'), '-p after a command is its own');
});

test('-p or --print is run, wherever it stands', () => {
  assert.deepEqual(sessionArgv(argv('-p', 'fix it')), argv('run', 'fix it'));
  assert.deepEqual(sessionArgv(argv('--yes', '--print', 'fix it')), argv('run', '--yes', 'fix it'));
});

test('nothing on a terminal, options only, or a quoted task is the session; help, version, a word or a pipe are not', () => {
  assert.deepEqual(sessionArgv(argv(), true), argv('session'));
  assert.deepEqual(sessionArgv(argv(), false), argv(), 'no terminal: the help');
  assert.deepEqual(sessionArgv(argv('-c')), argv('session', '-c'));
  assert.deepEqual(sessionArgv(argv('fix the tests', '--yes')), argv('session', 'fix the tests', '--yes'));
  for (const args of [['--help'], ['-v'], ['rnu']]) assert.deepEqual(sessionArgv(argv(...args)), argv(...args));
});

test('the program has every command for help, only the one named otherwise, the session hidden', async () => {
  const all = await createProgram(argv('--help'));
  const names = all.commands.map((command) => command.name());
  assert.deepEqual([...names].sort(), ['config', 'continue', 'demo', 'diff', 'fork', 'log', 'mcp', 'resume', 'run', 'runs', 'session', 'show']);
  assert.doesNotMatch(all.helpInformation(), /^\s+session\b/m);
  assert.match(all.helpInformation(), /^\s+runs\b/m);
  assert.deepEqual((await createProgram(argv('log', 'x'))).commands.map((command) => command.name()), ['log']);
});

test("each command's --help has its examples and exit codes", async () => {
  const program = await createProgram(argv('--help'));
  for (const name of ['run', 'resume', 'fork', 'runs', 'log', 'show', 'demo']) {
    const command = program.commands.find((c) => c.name() === name);
    assert.ok(command, name);
    let help = '';
    command.configureOutput({ writeOut: (text) => void (help += text) });
    command.outputHelp();
    assert.match(help, /\nExamples:\n {2}savepoint /, name);
    assert.match(help, /\nExit codes: 0 /, name);
  }
});

test('a parse error is a UsageError naming the command, and a typo gets its suggestion', async () => {
  const parse = async (...args: string[]) => (await createProgram(argv(...args))).parseAsync(sessionArgv(argv(...args)));
  await assert.rejects(parse('rnu'), (error: unknown) => error instanceof UsageError && /unknown command 'rnu': did you mean run\?/.test(error.message));
  await assert.rejects(parse('fork', 'some-run'), (error: unknown) => error instanceof UsageError && /--at/.test(error.message));
  await assert.rejects(parse('fork', 'some-run', '--at', '0'), (error: unknown) => error instanceof UsageError && error.message === '--at needs a step number (1 or more), not "0".');
  await assert.rejects(parse('log', '--bogus'), (error: unknown) => error instanceof UsageError && /--bogus/.test(error.message));
});
