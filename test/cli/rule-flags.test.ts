// --allowedTools and --disallowedTools, Claude Code's flags, through the real CLI with no terminal
// and the fake Anthropic server: `Bash(npm test:*)` lets `npm test` run where nothing could approve
// it, a --disallowedTools rule denies another command of the same answer, and a rule that names no
// tool stops the command before anything runs, naming the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, fakeEnv, lastToolResults, resultText, runCli } from '../helpers/cli.js';
import { userHomeIn } from '../helpers/trust.js';

const scratch = useScratch();

test('--allowedTools "Bash(npm test:*)" runs npm test with no terminal, --disallowedTools denies touch, and a bad rule is named', async () => {
  const repo = await scratch.repo({ 'package.json': JSON.stringify({ name: 'flags', scripts: { test: 'node -e "require(\'fs\').writeFileSync(\'tested.txt\', \'ok\')"' } }) });
  const fake = await scratch.fake([
    { tools: [{ name: 'run_bash', input: { command: 'npm test' } }, { name: 'run_bash', input: { command: 'touch denied.txt' } }] },
    { text: 'Tested.' },
  ]);
  const env = { ...fakeEnv(fake), ...userHomeIn(scratch) };
  const result = await runCli(['run', '--no-sandbox', '--allowedTools', 'Bash(npm test:*), Read', '--disallowedTools', 'Bash(touch:*)', 'test it'], { cwd: repo.root, env });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readFileSync(join(repo.root, 'tested.txt'), 'utf8'), 'ok', 'npm test ran');
  assert.equal(existsSync(join(repo.root, 'denied.txt')), false, 'touch did not run');
  const [tested, denied] = lastToolResults(fake.requests[1]!);
  assert.notEqual(tested!.is_error, true, resultText(tested!));
  assert.equal(denied!.is_error, true);
  assert.match(resultText(denied!), /deny it \(rule "Bash\(touch:\*\)"\)/);

  const bad = await runCli(['run', '--disallowedTools', 'Bash(rm:*) Shell', 'another task'], { cwd: repo.root, env });
  assert.equal(bad.code, 2);
  assert.match(assertOneParagraph(bad.stderr), /--disallowedTools: the rule "Shell" names no tool/);
  assert.equal(fake.requests.length, 2, 'nothing asked of the model');
});
