// The keys read during a session's turn, in-process on a stand-in terminal: a lone ESC is Esc only
// after a quiet gap, an arrow key's sequence (whole, or split across two reads) never is, a pasted
// block is text whatever it holds, and every other key is typed ahead. And the pieces the session's
// commands rest on: the built-in names, Tab's candidates, a rule list from the command line, a
// command file's front matter and arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESC_QUIET_MS, TurnKeys } from '../../src/cli/interactive/turn-keys.js';
import { completeLine } from '../../src/cli/interactive/completion.js';
import { parsePromptLine } from '../../src/cli/interactive/slash-commands.js';
import { BUILT_IN_NAMES } from '../../src/cli/view/session-settings.js';
import { expandCustomCommand, findCustomCommands, splitRuleList } from '../../src/settings/index.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// A terminal stand-in: raw mode noted, keys sent as reads.
function fakeTerminal() {
  const input = Object.assign(new EventEmitter(), { isTTY: true, isRaw: false, setRawMode(on: boolean) { input.isRaw = on; return input; }, resume() {}, pause() {} });
  return input;
}

test('a lone ESC stops the turn after the quiet gap; arrows (whole or split) and a pasted ESC do not; the rest is typed ahead', (t) => {
  // The quiet gap is a timer: mocked, the test moves the clock past it instead of sleeping through it.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const input = fakeTerminal();
  let stops = 0;
  let typed = '';
  const keys = new TurnKeys({ stop: () => stops++, typed: (k) => (typed += k) }, input as unknown as NodeJS.ReadStream);
  keys.resume();
  assert.equal(input.isRaw, true);
  input.emit('data', Buffer.from('ab\x1b[A'));
  input.emit('data', Buffer.from('\x1b'));
  input.emit('data', Buffer.from('[B'));
  input.emit('data', Buffer.from('\x1b[200~pasted\x1b\x1b[201~'));
  t.mock.timers.tick(ESC_QUIET_MS * 10);
  assert.equal(stops, 0, 'no Esc among them');
  assert.equal(typed, 'ab\x1b[A\x1b[B\x1b[200~pasted\x1b\x1b[201~');
  input.emit('data', Buffer.from('\x1b'));
  t.mock.timers.tick(ESC_QUIET_MS);
  assert.equal(stops, 1, 'the lone Esc stops the turn once the gap is quiet');
  input.emit('data', Buffer.from('\x1b'));
  t.mock.timers.tick(ESC_QUIET_MS * 10);
  assert.equal(stops, 1, 'a second Esc does nothing more');
  keys.pause();
  assert.equal(input.isRaw, false);
});

test('the built-in names are every name the session parses as its own; Tab offers slash commands and @ paths', () => {
  for (const name of BUILT_IN_NAMES) assert.notEqual(parsePromptLine(`/${name}`).type, 'unknown', name);
  assert.equal(parsePromptLine('/greet Ada').type, 'unknown');
  const dir = scratch.dir();
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'add.js'), '');
  mkdirSync(join(dir, '.git'));
  assert.deepEqual(completeLine('/gr', { commands: () => ['greet', 'help'], cwd: dir }), [['/greet'], '/gr']);
  assert.deepEqual(completeLine('explain @s', { commands: () => [], cwd: dir }), [['@src/'], '@s']);
  assert.deepEqual(completeLine('explain @src/a', { commands: () => [], cwd: dir }), [['@src/add.js'], '@src/a']);
  assert.deepEqual(completeLine('@.g', { commands: () => [], cwd: dir })[0], []);
});

test('a rule list splits at commas and spaces outside parentheses, and names a bad rule', () => {
  assert.deepEqual(splitRuleList('Bash(npm test:*), Read  run_bash(git status)'), { rules: ['Bash(npm test:*)', 'Read', 'run_bash(git status)'] });
  assert.match(splitRuleList('Read Nope').problem!.problem, /names no tool/);
  assert.equal(splitRuleList('Read Nope').problem!.rule, 'Nope');
});

test("a command's front matter gives its description and hint; $ARGUMENTS and $1 are filled in", () => {
  const home = scratch.dir();
  mkdirSync(join(home, 'savepoint', 'commands'), { recursive: true });
  writeFileSync(join(home, 'savepoint', 'commands', 'fix.md'), '---\ndescription: "Fix a bug"\nargument-hint: <file> [why]\n---\nFix $1 because $2. All: $ARGUMENTS\n');
  const [fix] = findCustomCommands(undefined, false, { XDG_CONFIG_HOME: home });
  assert.equal(fix!.description, 'Fix a bug');
  assert.equal(fix!.argumentHint, '<file> [why]');
  assert.equal(expandCustomCommand(fix!, 'a.js it-breaks'), 'Fix a.js because it-breaks. All: a.js it-breaks');
});
