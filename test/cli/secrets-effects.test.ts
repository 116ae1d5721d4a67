// Redaction guards the journal, never the user's files: end to end through the CLI and the fake
// Anthropic server, a key the model writes lands exact on disk, an ordinary word in a secret-named
// variable is left alone, and a .env the model reads (shown redacted) and writes back keeps its real
// key. Each time `git log -p agent-journal` holds no secret, and a replay of the finished run sends
// nothing and changes nothing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { MessagesBody } from '../helpers/fake-anthropic.js';
import { commitCount, gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, assertStepModes, fakeEnv, lastToolResults, resultText, runCli, worktreeFiles } from '../helpers/cli.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();

// Assembled at run time, so no scanner takes this file for a leak. The first is AWS's documented example key.
const AWS_EXAMPLE_KEY = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const ANTHROPIC_KEY = ['sk-ant-', 'api03-', 'Qw7Er5Ty3Ui1Op9As'.repeat(3)].join('');
const DEPLOY_TOKEN = `dpl-${Math.random().toString(36).slice(2, 12)}-${Date.now().toString(36)}`;

// The whole journal as git shows it, entries, subjects and checkpoint diffs.
const journalLog = (repo: TempRepo) => gitOut(repo.root, ['log', '-p', '--binary', '--format=%H%n%B', 'agent-journal']);

// Replays the finished run with `args` and checks that nothing at all changed.
async function assertReplayChangesNothing(repo: TempRepo, fake: { requests: MessagesBody[] }, args: string[], env: Record<string, string | undefined>, steps: number): Promise<void> {
  const files = worktreeFiles(repo.root);
  const commits = await commitCount(repo.root);
  const requests = fake.requests.length;
  const replay = await runCli(args, { cwd: repo.root, env });
  assert.equal(replay.code, 0, replay.stderr);
  assertStepModes(replay.stdout, steps, 'the replay');
  assert.equal(fake.requests.length, requests, 'the replay sends no request');
  assert.deepEqual(worktreeFiles(repo.root), files, 'the replay changes no file');
  assert.equal(await commitCount(repo.root), commits, 'the replay writes nothing to the journal');
}

describe('effects are exact, the journal stays clean', () => {
  test('an AWS example key the model writes into a fixture is exact on disk and absent from git log -p agent-journal', async () => {
    const fixture = `export const credentials = {\n  accessKeyId: '${AWS_EXAMPLE_KEY}',\n  region: 'us-east-1',\n};\n`;
    const fake = await scratch.fake([
      { text: 'Writing the fixture.', tools: [{ name: 'write_file', input: { path: 'test/fixtures/aws.js', content: fixture } }] },
      { tools: [{ name: 'run_bash', input: { command: 'grep -c accessKeyId test/fixtures/aws.js && cat test/fixtures/aws.js' } }] },
      { text: `The fixture uses ${AWS_EXAMPLE_KEY}.` },
    ]);
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const env = fakeEnv(fake);
    const args = ['run', '--yes', 'add an AWS fixture'];
    const result = await runCli(args, { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);

    assert.equal(repo.read('test/fixtures/aws.js'), fixture, 'the file on disk holds exactly what the model wrote');
    const log = await journalLog(repo);
    assert.ok(!log.includes(AWS_EXAMPLE_KEY), 'the key appears nowhere in git log -p agent-journal');
    const placeholders = new Set(log.match(/\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]/g));
    assert.equal(placeholders.size, 1, 'one value, one placeholder, everywhere (model answer, checkpoint, command output)');
    // The model saw the placeholder in the command output, never the key.
    assert.match(resultText(lastToolResults(fake.requests[2]!)[0]!), /accessKeyId: '\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]'/);
    for (const body of fake.requests) assert.ok(!JSON.stringify(body).includes(AWS_EXAMPLE_KEY));

    // The value lives only in the local secret book under .git: private, and in no commit.
    const book = join(repo.root, '.git/savepoint/secrets.json');
    assert.equal(statSync(book).mode & 0o777, 0o600);
    const entries = JSON.parse(readFileSync(book, 'utf8')).secrets as Record<string, { kind: string; value: string }>;
    assert.deepEqual(Object.values(entries), [{ kind: 'AWS_ACCESS_KEY', value: AWS_EXAMPLE_KEY }]);
    assert.deepEqual(Object.keys(entries), [...placeholders]);

    await assertReplayChangesNothing(repo, fake, args, env, 5);
  });

  test('SECRET_KEY_BASE=development does not alter "development" anywhere, and debug output says so once', async () => {
    const fake = await scratch.fake([
      {
        text: 'Configuring development.',
        tools: [
          { name: 'write_file', input: { path: 'config/mode.txt', content: 'mode: development\nother: development-only\n' } },
          { name: 'run_bash', input: { command: 'echo "running in development"' } },
        ],
      },
      { text: 'The app now runs in development.' },
    ]);
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    const env = fakeEnv(fake, { SECRET_KEY_BASE: 'development', SAVEPOINT_DEBUG: '1' });
    const args = ['run', '--yes', 'set the development mode'];
    const result = await runCli(args, { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);

    assert.equal(repo.read('config/mode.txt'), 'mode: development\nother: development-only\n');
    const log = await journalLog(repo);
    assert.ok(!log.includes('REDACTED'), 'nothing was redacted');
    assert.match(log, /running in development/);
    assert.match(resultText(lastToolResults(fake.requests[1]!)[1]!), /running in development/);
    assert.match(result.stdout, /The app now runs in development\./);
    const said = result.stderr.match(/SECRET_KEY_BASE is not treated as a secret: its value is an ordinary word\./g) ?? [];
    assert.equal(said.length, 1, `said once on stderr:\n${result.stderr}`);

    await assertReplayChangesNothing(repo, fake, args, env, 4);
  });

  test('the model reads .env (shown redacted), writes it back with one setting changed, and the real keys survive on disk', async () => {
    const dotenv = `ANTHROPIC_API_KEY=${ANTHROPIC_KEY}\nDEPLOY_TOKEN=${DEPLOY_TOKEN}\nDEBUG=false\n`;
    // The model works from what it was shown: the read_file result, with placeholders for the keys.
    const fake = await scratch.fake((body) => {
      const turn = body.messages.filter((m) => m.role === 'assistant').length;
      if (turn === 0) return { tools: [{ name: 'read_file', input: { path: '.env' } }] };
      if (turn === 1) {
        const shown = resultText(lastToolResults(body)[0]!).split('\n').map((line) => line.replace(/^\s*\d+\t/, ''));
        const content = `${shown.join('\n').replace('DEBUG=false', 'DEBUG=true')}\n`;
        return { text: 'Turning debug on.', tools: [{ name: 'write_file', input: { path: '.env', content } }] };
      }
      return { text: 'DEBUG is on.' };
    });
    const repo = await scratch.repo({ 'README.md': '# app\n' });
    repo.write('.env', dotenv); // untracked and not ignored: checkpoints record it (redacted)
    const env = fakeEnv(fake, { DEPLOY_TOKEN });
    const args = ['run', '--yes', 'turn debug on in .env'];

    // Stop after the model answered the read: it has seen the placeholders, and nothing was written yet.
    const first = await runCli([...args, '--max-steps', '3'], { cwd: repo.root, env });
    assert.equal(first.code, 3, first.stderr); // 3: stopped at --max-steps
    const shown = resultText(lastToolResults(fake.requests[1]!)[0]!);
    assert.match(shown, /ANTHROPIC_API_KEY=\[REDACTED:ANTHROPIC_KEY:[0-9a-f]{8}\]/);
    assert.match(shown, /DEPLOY_TOKEN=\[REDACTED:DEPLOY_TOKEN\]/);

    // Another machine, in effect: without the secret book, the file on disk no longer matches the
    // checkpoint (the key would get a new placeholder). --restore leaves it as it is: the run never
    // wrote .env, and a file the run never wrote is never overwritten (this test once expected the
    // checkpoint's placeholder written over the real key on disk). The write then stops before it
    // runs, naming the secret it lacks.
    const book = join(repo.root, '.git/savepoint/secrets.json');
    renameSync(book, `${book}.away`);
    const noBook = await runCli([...args, '--restore'], { cwd: repo.root, env });
    assert.equal(noBook.code, 1);
    assert.match(noBook.stdout, /Left 1 file\(s\) the run never wrote as you have them: \.env/);
    assert.match(assertOneParagraph(noBook.stderr), /needs the secret \[REDACTED:ANTHROPIC_KEY:[0-9a-f]{8}\].*\.git\/savepoint\/secrets\.json/);
    assert.equal(repo.read('.env'), dotenv, 'the real keys stay on disk');
    // The book is back, DEPLOY_TOKEN is not set: the other way round.
    renameSync(`${book}.away`, book);
    const noToken = await runCli([...args, '--restore'], { cwd: repo.root, env: { ...env, DEPLOY_TOKEN: undefined } });
    assert.equal(noToken.code, 1);
    assert.match(assertOneParagraph(noToken.stderr), /needs the secret \[REDACTED:DEPLOY_TOKEN\].*environment variable DEPLOY_TOKEN/);
    assert.equal(repo.read('.env'), dotenv);

    // With both known, the write runs with the real values.
    const result = await runCli(args, { cwd: repo.root, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(repo.read('.env'), dotenv.replace('DEBUG=false', 'DEBUG=true'), 'the real keys survive; only DEBUG changed');
    const log = await journalLog(repo);
    assert.ok(!log.includes(ANTHROPIC_KEY) && !log.includes(DEPLOY_TOKEN), 'no key in git log -p agent-journal');
    const run = (await gitOut(repo.root, ['ls-tree', '--name-only', 'agent-journal:runs'])).split('\n')[0]!;
    assert.match(await gitOut(repo.root, ['show', `agent-journal:runs/${run}/worktree/.env`]), /^ANTHROPIC_API_KEY=\[REDACTED:ANTHROPIC_KEY:[0-9a-f]{8}\]\nDEPLOY_TOKEN=\[REDACTED:DEPLOY_TOKEN\]\nDEBUG=true$/);
    assert.ok(existsSync(book));

    await assertReplayChangesNothing(repo, fake, args, env, 5);
  });
});
