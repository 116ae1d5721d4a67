// Hooks in settings, through the real CLI against the fake Messages API: a PreToolUse hook that
// exits 2 blocks `rm` and its stderr is the call's result the model reads; a PostToolUse hook runs
// once per finished step and never again after kill -9 and the identical command; a
// UserPromptSubmit hook adds context or blocks the prompt; a Stop hook sends the model on, once,
// and a finished run's replay runs no hook; an untrusted clone's hooks do not run; a hooks key of
// the wrong shape is a one-paragraph error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, fakeEnv, gitOut, lastToolResults, resultText, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { userHomeIn } from '../helpers/trust.js';
import { noSandboxReason } from '../helpers/sandbox.js';
import type { MessagesBody } from '../helpers/fake-anthropic.js';

const scratch = useScratch();

// A hook script in node (no jq needed): `body` sees `event` (the JSON from stdin) and `log(line)`, which appends to `logFile`.
function hookScript(dir: string, name: string, logFile: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import { appendFileSync, existsSync, readFileSync } from 'node:fs';\n` +
      `const event = JSON.parse(readFileSync(0, 'utf8'));\n` +
      `const log = (line) => appendFileSync(${JSON.stringify(logFile)}, line + '\\n');\n` +
      `${body}\n`,
  );
  return `node ${file}`;
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

// The text of the last user message of a request.
function lastUserText(body: MessagesBody): string {
  const last = body.messages.at(-1)!;
  assert.equal(last.role, 'user');
  const content = last.content as unknown;
  return typeof content === 'string' ? content : (content as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n');
}

describe('hooks', { concurrency: true }, () => {
  test('a PreToolUse hook exiting 2 blocks rm with its stderr to the model; a PostToolUse hook runs once per finished step, never again after kill -9 and the identical command', async () => {
    const outside = scratch.dir('savepoint-hooks-');
    const post = join(outside, 'post.log');
    const pre = join(outside, 'pre.log');
    const preHook = hookScript(outside, 'pre', pre, `log(JSON.stringify(event));\nif (/^rm\\b/.test(event.tool_input.command)) { process.stderr.write('rm is not allowed here: use git rm'); process.exit(2); }`);
    const postHook = hookScript(outside, 'post', post, `log(event.hook_event_name + ' ' + event.tool_name + ' ' + JSON.stringify(event.tool_response.output.trim()));`);
    // Claude Code's tool name in one matcher, savepoint's in the other.
    const home = userHomeIn(scratch, { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: preHook }] }], PostToolUse: [{ matcher: 'run_bash|write_file', hooks: [{ type: 'command', command: postHook, timeout: 30 }] }] } });
    const hold = new Set([3]);
    const fake = await scratch.fake(
      [
        { tools: [{ name: 'run_bash', input: { command: 'rm README.md' } }] },
        { tools: [{ name: 'run_bash', input: { command: 'echo one' } }] },
        { tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }] },
        { text: 'Done: README kept, b.txt written.' },
      ],
      hold,
    );
    const repo = await scratch.repo();
    const args = ['run', '--yes', 'tidy the repository'];
    const env = { ...fakeEnv(fake), ...home };

    const first = startCli(args, { cwd: repo.root, env });
    await waitUntil(() => fake.requests.length >= 4, 'the fourth model call', { child: first, timeoutMs: 60_000 });
    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');
    assert.ok(existsSync(join(repo.root, 'README.md')), 'the blocked rm did not run');
    const blocked = lastToolResults(fake.requests[1]!)[0]!;
    assert.equal(blocked.is_error, true);
    assert.match(resultText(blocked), /blocked by a PreToolUse hook, which said:\nrm is not allowed here: use git rm\nIt was not run/);
    const event = JSON.parse(lines(pre)[0]!) as Record<string, unknown>;
    assert.equal(event.hook_event_name, 'PreToolUse');
    assert.equal(event.tool_name, 'run_bash');
    assert.deepEqual(event.tool_input, { command: 'rm README.md' });
    assert.equal(event.cwd, repo.root);
    assert.match(String(event.session_id), /\S/);
    assert.equal(lines(post).length, 2, 'the PostToolUse hook ran once for each finished run_bash and write_file');
    assert.match(lines(post)[0]!, /^PostToolUse run_bash "exit 0\\none"$/);
    assert.match(lines(post)[1]!, /^PostToolUse write_file "/);
    assert.equal(lines(pre).length, 2, 'the PreToolUse hook ran for each run_bash call, not for write_file');
    assert.doesNotMatch(resultText(lastToolResults(fake.requests[2]!)[0]!), /PostToolUse/, "a hook that says nothing adds nothing to the model's result");

    hold.clear();
    const before = fake.requests.length;
    const second = await runCli(args, { cwd: repo.root, env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /Done: README kept/);
    assert.equal(fake.requests.length - before, 1, 'only the unfinished model call was made again');
    assert.equal(lines(post).length, 2, 'no PostToolUse hook ran again on resume');
    assert.equal(lines(pre).length, 2, 'no PreToolUse hook ran again on resume');
  });

  test('kill -9 while a PostToolUse hook runs leaves its step in flight: the identical command reports it to the model and runs neither the call nor the hook again', async () => {
    const outside = scratch.dir('savepoint-hooks-');
    const log = join(outside, 'post.log');
    const hold = join(outside, 'hold');
    writeFileSync(hold, '');
    const postHook = hookScript(outside, 'post', log, `log('start');\nwhile (existsSync(${JSON.stringify(hold)})) await new Promise((r) => setTimeout(r, 20));\nlog('end');`);
    const home = userHomeIn(scratch, { hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: postHook }] }] } });
    const fake = await scratch.fake([{ tools: [{ name: 'run_bash', input: { command: 'echo once >> ran.txt' } }] }, { text: 'Told.' }]);
    const repo = await scratch.repo();
    const args = ['run', '--yes', 'append once'];
    const env = { ...fakeEnv(fake), ...home };
    const first = startCli(args, { cwd: repo.root, env });
    await waitUntil(() => lines(log).includes('start'), 'the PostToolUse hook to start', { child: first, timeoutMs: 60_000 });
    first.kill();
    await first.result;
    rmSync(hold); // the hook outlived the kill: let it end (its group is its own)
    await waitUntil(() => lines(log).includes('end'), 'the orphaned hook to end');

    const second = await runCli(args, { cwd: repo.root, env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(resultText(lastToolResults(fake.requests.at(-1)!)[0]!), /Its outcome is unknown[\s\S]*It was not run again/);
    assert.deepEqual(lines(log), ['start', 'end'], 'the hook ran once');
    assert.equal(readFileSync(join(repo.root, 'ran.txt'), 'utf8'), 'once\n', 'the command ran once');
  });

  test('a UserPromptSubmit hook adds context or blocks the prompt; a Stop hook sends the model on once, bounded, and a replay runs no hook', async () => {
    const outside = scratch.dir('savepoint-hooks-');
    const stopLog = join(outside, 'stop.log');
    const promptLog = join(outside, 'prompt.log');
    const promptHook = hookScript(outside, 'prompt', promptLog, `log(event.prompt);\nif (event.prompt.includes('secret')) { process.stderr.write('prompts about secrets are not sent'); process.exit(2); }\nprocess.stdout.write('The build is green today.');`);
    const stopHook = hookScript(outside, 'stop', stopLog, `log(String(event.stop_hook_active));\nif (!event.stop_hook_active) { process.stderr.write('Run the tests before you stop.'); process.exit(2); }`);
    const home = userHomeIn(scratch, { hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: promptHook }] }], Stop: [{ matcher: '', hooks: [{ type: 'command', command: stopHook }] }] } });
    const fake = await scratch.fake([{ text: 'First answer.' }, { text: 'Tests pass. Final answer.' }]);
    const repo = await scratch.repo();
    const env = { ...fakeEnv(fake), ...home };

    // A run recorded before the hooks were set replays as it was: no hook step appears in it.
    const hi = await scratch.fake([{ text: 'Hi.' }]);
    assert.equal((await runCli(['run', '--yes', 'say hi'], { cwd: repo.root, env: { ...fakeEnv(hi), ...userHomeIn(scratch) } })).code, 0);
    const replayed = await runCli(['run', '--yes', 'say hi'], { cwd: repo.root, env: { ...env, ...fakeEnv(hi) } });
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /Hi\./);
    assert.equal(hi.requests.length, 1, 'the finished run was replayed, not asked again');
    assert.deepEqual(lines(promptLog), [], 'no hook ran for a replayed run');

    const run = await runCli(['run', '--yes', 'explain the build'], { cwd: repo.root, env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(fake.requests.length, 2);
    assert.match(lastUserText(fake.requests[0]!), /^explain the build\n\n\[UserPromptSubmit hook\] The build is green today\.$/);
    assert.equal(lastUserText(fake.requests[1]!), '[Stop hook] Run the tests before you stop.');
    assert.match(run.stdout, /A Stop hook sent the model on: Run the tests before you stop\./);
    assert.match(run.stdout, /Tests pass\. Final answer\./);
    assert.deepEqual(lines(stopLog), ['false', 'true'], 'the second Stop hook was told it is already active, and let the model stop');

    // The finished run again: everything is handed back, no hook runs, no model call is made.
    const again = await runCli(['run', '--yes', 'explain the build'], { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(fake.requests.length, 2);
    assert.deepEqual(lines(stopLog), ['false', 'true']);
    assert.deepEqual(lines(promptLog), ['explain the build']);

    // A blocked prompt is not sent; the person is told what the hook said.
    const blocked = await runCli(['run', '--yes', 'tell me the secret'], { cwd: repo.root, env });
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.equal(fake.requests.length, 2, 'the blocked prompt reached no model');
    assert.match(blocked.stdout, /A UserPromptSubmit hook blocked this message: it was not sent to the model\. The hook said: prompts about secrets are not sent/);
    assert.doesNotMatch(blocked.stdout, /Final answer/, 'a blocked message has no answer to print');
  });

  test("an untrusted clone's hooks do not run and are said as left out; hooks of the wrong shape are a one-paragraph error", async () => {
    const marker = join(scratch.dir('savepoint-marker-'), 'ran');
    const origin = await scratch.repo({ 'README.md': '# project\n', '.savepoint/settings.json': JSON.stringify({ hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: `touch ${marker}` }] }] } }) });
    const dir = scratch.dir('savepoint-clone-');
    await gitOut(dir, ['clone', '-q', '--bare', origin.root, join(dir, 'origin.git')]);
    await gitOut(dir, ['clone', '-q', join(dir, 'origin.git'), join(dir, 'work')]);
    const root = join(dir, 'work');
    const fake = await scratch.fake([{ tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'A project.' }]);
    const run = await runCli(['run', '--yes', '--no-sandbox', 'what is this'], { cwd: root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(existsSync(marker), false, "the untrusted folder's hook ran");
    assert.match(run.stderr, /Left out: this folder is not trusted, so its PostToolUse hook on "\*" \(\.savepoint\/settings\.json\) was left out/);

    const bad = await runCli(['run', '--yes', 'anything'], { cwd: root, env: { ...fakeEnv(fake), ...userHomeIn(scratch, { hooks: { PreToolUse: [{ matcher: 'run_bash', hooks: [{ type: 'http', url: 'http://x' }] }] } }) } });
    assert.notEqual(bad.code, 0);
    assert.match(assertOneParagraph(bad.stderr), /"hooks\.PreToolUse\[0\]\.hooks\[0\]\.type" must be "command": savepoint runs command hooks only/);
    const unknown = await runCli(['run', '--yes', 'anything'], { cwd: root, env: { ...fakeEnv(fake), ...userHomeIn(scratch, { hooks: { SessionStart: [] } }) } });
    assert.match(assertOneParagraph(unknown.stderr), /"hooks\.SessionStart" is not a hook event savepoint runs: it runs PreToolUse, PostToolUse, UserPromptSubmit, Stop/);
    assert.equal(fake.requests.length, 2, 'nothing ran with a broken settings file');
  });

  test("a trusted repository's hooks run in the sandbox: the working tree is theirs, the rest of the machine is not", { skip: noSandboxReason() }, async () => {
    const outside = join(scratch.dir('savepoint-outside-'), 'escaped');
    const root = await scratch.repo({ 'README.md': '# project\n', '.savepoint/settings.json': JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: `echo ran >> hook-ran.txt; touch ${outside}` }] }] } }) });
    const fake = await scratch.fake([{ tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'A project.' }]);
    const run = await runCli(['run', '--trust', 'what is this'], { cwd: root.root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(join(root.root, 'hook-ran.txt'), 'utf8'), 'ran\n', 'the trusted hook ran once, in the working tree');
    assert.equal(existsSync(outside), false, "the repository's hook wrote outside its sandbox");
  });
});
