// A busy model service, through the real CLI and the test server: an `error` event in the middle
// of an answer (overloaded) is asked again as a 529 is; a 429 with a retry-after is waited out
// with a notice that says how long (a model-notice event under --json); a retry-after longer than
// --max-retry-wait stops the run at once with a message that says the identical command goes on,
// and it does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useScratch } from '../helpers/scratch.js';
import { Command } from 'commander';
import { addDriveOptions, type DriveFlags } from '../../src/cli/view/drive-flags.js';
import { UsageError } from '../../src/errors/index.js';
import { assertNoStack, assertOneParagraph, fakeEnv, runCli } from '../helpers/cli.js';

const scratch = useScratch();

const TURNS = [{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'The service came back.' }];

test('an overloaded error in the middle of an answer is asked again, and the run goes on', async () => {
  const repo = await scratch.repo({ 'README.md': '# busy\n' });
  const fake = await scratch.fake(TURNS);
  fake.failNext(529, 1, { midStream: true });
  const run = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /The service came back\./);
  assert.equal(fake.requests.length, 3, 'the broken answer was asked again');
  assert.match(run.stdout.replace(/\s+/g, ' '), /The model service is busy \(the answer broke off \(overloaded_error\)\): asking again in [\d.]+ s/);
});

test('a 429 with a retry-after of two seconds is waited out with a notice, shown as an event under --json', async () => {
  const repo = await scratch.repo({ 'README.md': '# rate\n' });
  const fake = await scratch.fake(TURNS);
  fake.failNext(429, 1, { retryAfter: 2 });
  const started = Date.now();
  const run = await runCli(['run', '--yes', '--json', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.ok(Date.now() - started >= 2000, 'the wait the server asked for was kept');
  const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const waits = events.filter((e) => e.type === 'model-notice' && e.notice === 'retry-wait');
  assert.equal(waits.length, 1, run.stdout);
  assert.equal(waits[0]!.seconds, 2);
  assert.equal(waits[0]!.reason, 'the API answered 429 rate_limit_error');
  assert.equal(fake.requests.length, 3);
});

test('a retry-after longer than --max-retry-wait stops the run at once with a message, and the identical command goes on', async () => {
  const repo = await scratch.repo({ 'README.md': '# capped\n' });
  const fake = await scratch.fake(TURNS);
  const args = ['run', '--yes', '--max-retry-wait', '5', 'read the readme'];
  // The first answer is fine; the second request is told to come back in an hour.
  const first = await runCli(['run', '--yes', '--max-steps', '2', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(fake.requests.length, 1, first.stdout + first.stderr);
  fake.failNext(429, 1, { retryAfter: 3600 });
  const stopped = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
  assert.notEqual(stopped.code, 0);
  assertNoStack(stopped.stdout + stopped.stderr);
  assertOneParagraph(stopped.stderr);
  assert.match(stopped.stderr.replace(/\s+/g, ' '), /answered 429 rate_limit_error and asked savepoint to wait 3600 s before trying again, longer than --max-retry-wait allows \(5 s\)/);
  assert.match(stopped.stderr.replace(/\s+/g, ' '), /run the same command again later/);
  assert.equal(fake.requests.length, 2, 'it stopped instead of sleeping through the hour: the 429 was not asked again');
  const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /The service came back\./);
});

// The flag as `run`, `resume` and `continue` parse it (commander, in this process): how the CLI
// prints a UsageError (one paragraph, exit 2, no stack) is the same for every flag (test/cli/usage.test.ts).
test('--max-retry-wait takes a number of seconds above 0, and says so otherwise', () => {
  const parse = (...args: string[]) => addDriveOptions(new Command('run').exitOverride().configureOutput({ writeErr: () => {} })).parse(args, { from: 'user' }).opts<DriveFlags>();
  assert.equal(parse('--max-retry-wait', '5').maxRetryWait, 5);
  assert.throws(() => parse('--max-retry-wait', 'soon'), (error: unknown) => error instanceof UsageError && /--max-retry-wait needs a number above 0, not "soon"/.test(error.message));
  assert.throws(() => parse('--max-retry-wait', '0'), (error: unknown) => error instanceof UsageError && /--max-retry-wait needs a number above 0, not "0"/.test(error.message));
});
