// The CLI's manners: help that names the commands and flags, exit 2 for bad usage, exit 1 with one
// clear paragraph (and no stack trace unless SAVEPOINT_DEBUG=1) when it cannot do its job.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';
import { assertNoStack, assertOneParagraph, git, runCli } from '../helpers/cli.js';

describe('the command line', { concurrency: true }, () => {
  test("runs --help says it lists this worktree's runs and those from other machines, and --all every worktree's too", async () => {
    const help = await runCli(['runs', '--help'], { cwd: tmpdir() });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout.replace(/\s+/g, ' '), /List the runs of this worktree .* and those from other machines .*with --all, the runs of every other worktree of this repository too/);
    assert.doesNotMatch(help.stdout, /List every run/);
  });

  test('a mistyped command gets its suggestion in one sentence, and no suggestion that is only the start of the word typed', async () => {
    const typo = await runCli(['rn'], { cwd: tmpdir() });
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(assertOneParagraph(typo.stderr), /^savepoint: unknown command 'rn': did you mean run\? Usage: savepoint /);
    const login = await runCli(['login'], { cwd: tmpdir() });
    assert.equal(login.code, 2, login.stderr);
    const message = assertOneParagraph(login.stderr);
    assert.match(message, /^savepoint: unknown command 'login'\. Usage: /);
    assert.doesNotMatch(message, /did you mean/i);
  });

  describe('help', { concurrency: true }, () => {
    test('savepoint --help exits 0 and names the commands and the exit codes', async () => {
      const help = await runCli(['--help'], { cwd: tmpdir() });
      assert.equal(help.code, 0, help.stderr);
      for (const word of ['run', 'resume', 'demo', 'agent-journal', 'ANTHROPIC_API_KEY']) assert.ok(help.stdout.includes(word), `--help mentions ${word}:\n${help.stdout}`);
      // The exit codes, 141 for a closed pipe among them.
      assert.match(help.stdout, /Exit codes: 0 done, 1 a failure.*2 bad usage, 3 stopped at a limit you set.*130 stopped by Ctrl-C,\s+141/s);
    });

    test('savepoint run --help exits 0 and names every flag, its examples and exit codes', async () => {
      const help = await runCli(['run', '--help'], { cwd: tmpdir() });
      assert.equal(help.code, 0, help.stderr);
      for (const flag of ['--run <id>', '--fresh', '--model <name>', '--yes', '--max-steps <n>', '--in-flight <policy>']) {
        assert.ok(help.stdout.includes(flag), `run --help mentions ${flag}:\n${help.stdout}`);
      }
      assert.match(help.stdout, /\nExamples:\n {2}savepoint /);
      assert.match(help.stdout, /\nExit codes: 0 /);
    });

    test('savepoint mcp list --help ends with the examples and exit codes its usage message points at', async () => {
      const help = await runCli(['mcp', 'list', '--help'], { cwd: tmpdir() });
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /Examples:\n {2}savepoint mcp list /);
      assert.match(help.stdout, /Exit codes: 0 every server started/);
    });

    test('savepoint --version exits 0 and prints the package version', async () => {
      const version = await runCli(['--version'], { cwd: tmpdir() });
      assert.equal(version.code, 0, version.stderr);
      assert.match(version.stdout, /^\d+\.\d+\.\d+/);
    });
  });

  describe('bad usage exits 2', { concurrency: true }, () => {
    let repo: TempRepo;
    before(async () => {
      repo = await createTempRepo({ files: { 'README.md': '# usage\n' }, commit: true });
    });
    after(() => repo.remove());

    const cases: Array<[string, string[], RegExp]> = [
      ['run with no task', ['run'], /missing required argument/i],
      ['run with a blank task', ['run', '  '], /Say what the agent should do/],
      ['an unknown flag', ['run', '--frobnicate', 'do it'], /unknown option '--frobnicate'/],
      ['--max-steps abc', ['run', '--max-steps', 'abc', 'do it'], /--max-steps needs a whole number/],
      ['--max-steps 0', ['run', '--max-steps', '0', 'do it'], /--max-steps needs a whole number/],
      ['an unknown --in-flight policy', ['run', '--in-flight', 'maybe', 'do it'], /--in-flight/],
      ['an unknown command', ['frobnicate'], /unknown command/i],
      ['an unknown flag of a subcommand', ['mcp', 'list', '--frobnicate'], /^savepoint: unknown option '--frobnicate'\. Usage: savepoint mcp list \[options\]/],
      ['an argument a subcommand does not take', ['mcp', 'list', 'extra'], /^savepoint: too many arguments for 'list'/],
    ];
    for (const [what, args, message] of cases) {
      test(`${what} exits 2 with a message and no stack trace`, async () => {
        const result = await runCli(args, { cwd: repo.root, env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
        assert.equal(result.code, 2, `${result.stdout}\n${result.stderr}`);
        assert.match(result.stderr, message);
        assertNoStack(result.stderr);
        assert.equal((await git(repo.root, ['rev-parse', '--verify', '-q', 'agent-journal'])).code, 1, 'nothing was journaled');
      });
    }
  });

  describe('outside a git repository', { concurrency: true }, () => {
    let dir: string;
    before(async () => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), 'savepoint-norepo-')));
      assert.notEqual((await git(dir, ['rev-parse', '--git-dir'])).code, 0, `${dir} must not be inside a repository for this test`);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('run exits 1 with one paragraph that mentions git and no stack trace', async () => {
      const result = await runCli(['run', '--yes', 'fix the bug'], { cwd: dir, env: { ANTHROPIC_API_KEY: 'test-key' } });
      assert.equal(result.code, 1);
      const message = assertOneParagraph(result.stderr);
      assert.match(message, /not inside a git repository/);
      assert.match(message, /git init/);
    });

    test('resume exits 1 the same way', async () => {
      const result = await runCli(['resume'], { cwd: dir });
      assert.equal(result.code, 1);
      assert.match(assertOneParagraph(result.stderr), /git/);
    });

    test('with SAVEPOINT_DEBUG=1 the stack trace is shown as well', async () => {
      const result = await runCli(['run', '--yes', 'fix the bug'], { cwd: dir, env: { ANTHROPIC_API_KEY: 'test-key', SAVEPOINT_DEBUG: '1' } });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /not inside a git repository/);
      assert.match(result.stderr, /^\s+at .+/m);
      // The CLI runs bundled (scripts/bundle.js); its source maps name the TypeScript lines.
      assert.match(result.stderr, /^\s+at .+src\/git\/repository\.ts:\d+:\d+\)$/m);
    });
  });
});
