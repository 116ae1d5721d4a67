// The end of each command's --help: its examples in a column, a note where there is one, and its exit
// codes; added to a command and to its subcommands (`mcp list`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { addCommandHelp, helpEpilogue } from '../../src/cli/help.js';

test('examples line up, then the exit codes; a command without help gets none', () => {
  const run = helpEpilogue('run');
  assert.match(run, /^\nExamples:\n {2}savepoint run "make the failing test pass" +start the run for this task, or continue it\n/);
  const lines = run.split('\n').filter((line) => line.startsWith('  savepoint'));
  const column = lines.map((line) => line.search(/ {3}\S/));
  assert.ok(lines.length > 2 && column.every((at) => at === column[0]), 'the descriptions start in one column');
  assert.match(run, /Exit codes: 0 finished, 1 a failure .* 3 stopped at a limit you set/s);
  assert.match(helpEpilogue('log'), /141 the reader closed the pipe early/);
  assert.equal(helpEpilogue('no-such-command'), '');
});

test("a command's help and its subcommands' end with it", () => {
  const mcp = new Command('mcp');
  mcp.command('list');
  addCommandHelp(mcp);
  for (const command of [mcp, mcp.commands[0]!]) {
    let help = '';
    command.configureOutput({ writeOut: (text) => void (help += text) });
    command.outputHelp();
    assert.ok(help.trimEnd().endsWith(helpEpilogue('mcp').trimEnd()), command.name());
  }
  const plain = new Command('nothing');
  addCommandHelp(plain);
  assert.doesNotMatch(plain.helpInformation(), /Examples/);
});
