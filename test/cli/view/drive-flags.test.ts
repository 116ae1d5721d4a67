// The flags of the commands that drive a run, parsed in-process by commander as `run`, `resume` and
// `continue` get them: limits and pinned settings as numbers, each bad value a UsageError naming its
// flag, rule lists gathered over repeats, the in-flight policy's choices; and the words of a limit
// reached and of a refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { addDriveOptions, type DriveFlags } from '../../../src/cli/view/drive-flags.js';
import { UsageError } from '../../../src/errors/index.js';

function parse(...args: string[]): DriveFlags {
  const command = addDriveOptions(new Command('run').exitOverride().configureOutput({ writeErr: () => {} }));
  command.parse(args, { from: 'user' });
  return command.opts<DriveFlags>();
}

const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message);

test('defaults: report what was in flight, compact, push when a fetched journal says so, sandboxed', () => {
  const flags = parse();
  assert.deepEqual([flags.inFlight, flags.compact, flags.push, flags.sandbox, flags.maxSteps], ['report', true, undefined, true, undefined]);
});

test('limits and pinned settings arrive as numbers; switches as booleans', () => {
  const flags = parse('--max-steps', '20', '--max-turns', '5', '--max-cost', '0.5', '--max-tokens', '4096', '--compact-at', '0.6', '--thinking', '2048', '--context-window', '100000', '--push-timeout', '1.5', '--no-sandbox', '--no-compact', '-y', '--in-flight', 'rerun', '--push', 'origin');
  assert.deepEqual(
    [flags.maxSteps, flags.maxTurns, flags.maxCost, flags.maxTokens, flags.compactAt, flags.thinking, flags.contextWindow, flags.pushTimeout, flags.sandbox, flags.compact, flags.yes, flags.inFlight, flags.push],
    [20, 5, 0.5, 4096, 0.6, 2048, 100000, 1.5, false, false, true, 'rerun', 'origin'],
  );
  assert.equal(parse('--no-push').push, false);
});

test('each bad value is a UsageError naming the flag and the value', () => {
  assert.throws(() => parse('--max-steps', '2.5'), usage(/^--max-steps needs a whole number above 0, not "2\.5"\.$/));
  assert.throws(() => parse('--max-turns', '0'), usage(/--max-turns needs a whole number above 0/));
  assert.throws(() => parse('--max-cost', ' '), usage(/^--max-cost needs a number above 0, not " "\.$/));
  assert.throws(() => parse('--compact-at', '1'), usage(/^--compact-at needs a fraction between 0 and 1 \(such as 0\.8\), not "1"\.$/));
  assert.throws(() => parse('--thinking', '1000'), usage(/at least 1024 \(the API's minimum\), not "1000"/));
  assert.throws(() => parse('--push-retry', 'soon'), usage(/--push-retry needs a number above 0/));
  assert.throws(() => parse('--in-flight', 'ignore'), (error: unknown) => (error as { code?: string }).code === 'commander.invalidArgument');
});

test('rule flags gather their rules over repeats; an empty list or a bad rule is refused', () => {
  assert.deepEqual(parse('--allowedTools', 'Bash(npm test:*),Read', '--allowedTools', 'WebFetch').allowedTools, ['Bash(npm test:*)', 'Read', 'WebFetch']);
  assert.deepEqual(parse('--disallowedTools', 'Bash(rm:*) WebFetch').disallowedTools, ['Bash(rm:*)', 'WebFetch']);
  assert.throws(() => parse('--allowedTools', ' , '), usage(/^--allowedTools needs one or more rules/));
  assert.throws(() => parse('--allowedTools', 'Bash(unclosed'), usage(/^--allowedTools: the rule "Bash\(unclosed"/));
});
