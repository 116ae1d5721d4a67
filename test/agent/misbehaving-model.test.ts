// Answers that real models, proxies and compatible servers send and a run must survive, served by
// the test server in the SDK's own event shapes: a tool call in an answer that stopped as a refusal
// never runs and the refusal is told as one (through the real CLI: what the person is told, and what
// runs and log say); through the library in this process, a tool call without a name, two calls
// with one id, and input that is not JSON each get an is_error result and the run goes on, and so
// does the identical task again (it replays, never crashes); a message_delta without usage is fine;
// a paused turn is sent back so the model goes on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, assertToolPairing, fakeEnv, lastToolResults, resultText, runCli } from '../helpers/cli.js';
import { startRun, type RunOutcome, type SessionEvent } from '../../src/index.js';
import { createAnthropicProvider } from '../../src/model/anthropic.js';

const scratch = useScratch();

// `savepoint run --yes <task>` through the library, in this process: the model is the test server,
// through the Anthropic SDK as the CLI uses it; commands run without the sandbox.
function runInProcess(dir: string, fake: { url: string }, task: string, onEvent: (event: SessionEvent) => void = () => {}): Promise<RunOutcome> {
  const provider = () => createAnthropicProvider({ baseURL: fake.url, apiKey: 'test-key' });
  return startRun({ dir, task, provider, sandbox: { use: false }, approve: async () => true, onEvent });
}

const README = { name: 'read_file', input: { path: 'README.md' } };
const RUN_IT = { name: 'run_bash', input: { command: 'echo ran > ran.txt' } };

describe('misbehaving model answers', () => {
  test('a tool call in an answer that stopped as a refusal never runs, and the model and the user are told it was a refusal', async () => {
    const repo = await scratch.repo({ 'README.md': '# refusal\n' });
    const fake = await scratch.fake([
      { text: 'I started, but', tools: [RUN_IT], stopReason: 'refusal' },
      { text: 'I cannot help with that.', stopReason: 'refusal' },
      { text: 'Hello.' },
    ]);
    const run = await runCli(['run', '--yes', '--run', 'refused', 'run the command'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(run.code, 1, 'a refusal is not a success: ' + run.stdout + run.stderr);
    assert.match(assertOneParagraph(run.stderr), /The model refused \(stop reason "refusal"\): the task was not done/);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false, 'the call of a refused answer never ran');
    assert.match(run.stdout, /model turn 1\s+→ calls run_bash \(refused\)/);
    const [told] = lastToolResults(fake.requests[1]!);
    assert.equal(told!.is_error, true);
    assert.match(resultText(told!), /stopped as a refusal \(stop reason "refusal"\), so this run_bash call was not run/);
    assert.match(run.stdout, /model turn 2\s+→ answers "I cannot help with that\." \(refused\)/);
    assert.match(run.stdout, /I cannot help with that\.\s+\(The model refused: stop reason "refusal"\.\)/);
    assertToolPairing(fake.requests);
    // runs, log --json and the final event say "refused", never "finished".
    const runs = await runCli(['runs', '--json'], { cwd: repo.root, env: {} });
    assert.equal(runs.code, 0, runs.stderr);
    assert.equal((JSON.parse(runs.stdout) as { runs: Array<{ id: string; status: string }> }).runs.find((r) => r.id === 'refused')?.status, 'refused');
    const log = await runCli(['log', '--json', 'refused'], { cwd: repo.root, env: {} });
    assert.equal(log.code, 0, log.stderr);
    assert.equal((JSON.parse(log.stdout) as { run: { status: string } }).run.status, 'refused');
    // The identical command replays the refusal and says so, asking nothing.
    const again = await runCli(['run', '--yes', '--json', '--run', 'refused', 'run the command'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 1, again.stdout + again.stderr);
    const final = again.stdout.trim().split('\n').map((line) => JSON.parse(line) as { event?: string; type?: string; status?: string }).find((e) => (e.event ?? e.type) === 'final');
    assert.equal(final?.status, 'refused');
    assert.equal(fake.requests.length, 2, 'the replay asks nothing');
    const plain = await runCli(['run', '--yes', '--run', 'refused', 'run the command'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(plain.code, 1);
    assert.match(plain.stdout, /This run ended with the model's refusal before: replaying its \d+ steps/);
    assert.match(assertOneParagraph(plain.stderr), /ended before with the model's refusal \(stop reason "refusal"\), replayed from the journal: the task was not done/);
    assert.equal(fake.requests.length, 2, 'the replay asks nothing');
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false);
    // A follow-up answered normally clears it: the run is finished.
    const followed = await runCli(['continue', '--yes', '--run', 'refused', 'then say hello'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(followed.code, 0, followed.stdout + followed.stderr);
    const after = await runCli(['log', '--json', 'refused'], { cwd: repo.root, env: {} });
    assert.equal((JSON.parse(after.stdout) as { run: { status: string } }).run.status, 'finished');
  });

  // The next three go through the library in this process (the session, the loop, the SDK on the
  // test server's stream): the process boundary is not what they check.
  test('a call without a name, two calls with one id and input that is not JSON each get an is_error result, and the run and its replay go on', async () => {
    const repo = await scratch.repo({ 'README.md': '# quirks\n' });
    const turns: ScriptTurn[] = [
      { text: 'No name.', tools: [README] },
      { text: 'One id twice.', tools: [README, RUN_IT] },
      { text: 'Broken JSON.', tools: [RUN_IT] },
      { text: 'All handled.' },
    ];
    const fake = await scratch.fake(turns);
    fake.quirkNext({ noToolName: true });
    fake.quirkNext({ sameToolId: true });
    fake.quirkNext({ toolInputJson: { 0: '{"command": echo ran > ran.txt}' } });
    const run = await runInProcess(repo.root, fake, 'read the readme');
    assert.equal(run.status, 'finished');
    assert.equal(run.final, 'All handled.');
    assert.equal(fake.requests.length, 4);

    const [nameless] = lastToolResults(fake.requests[1]!);
    assert.equal(nameless!.is_error, true);
    assert.match(resultText(nameless!), /had no name, so it was not run/);

    const [first, second] = lastToolResults(fake.requests[2]!);
    assert.notEqual(first!.is_error, true, 'the first call of the id ran');
    assert.match(resultText(first!), /# quirks/);
    assert.equal(second!.is_error, true);
    assert.match(resultText(second!), /used the id of another call in the same answer, so it was not run/);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false, 'the call with the repeated id never ran');

    const [broken] = lastToolResults(fake.requests[3]!);
    assert.equal(broken!.is_error, true);
    assert.match(resultText(broken!), /input of this run_bash call was not valid JSON, so it was not run: "\{\\"command\\": echo ran > ran\.txt\}"/);
    assert.equal(existsSync(join(repo.root, 'ran.txt')), false, 'the call with broken input never ran');

    // Every request the API would take: unique ids, a tool_result for each, names on every call.
    assertToolPairing(fake.requests);
    for (const body of fake.requests) {
      const uses = body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; id?: string; name?: string }>) : [])).filter((b) => b.type === 'tool_use');
      assert.equal(new Set(uses.map((b) => b.id)).size, uses.length, 'tool_use ids are unique');
      assert.ok(uses.every((b) => typeof b.name === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(b.name)), 'every tool_use has a valid name');
    }

    // The identical task again replays every step (the five steps, in order, from the journal) and asks nothing.
    const replayed: number[] = [];
    const again = await runInProcess(repo.root, fake, 'read the readme', (event) => {
      if (event.type === 'replayed') replayed.push(event.position);
    });
    assert.equal(again.status, 'finished');
    assert.deepEqual([again.replayed, again.live], [run.steps, 0]);
    assert.deepEqual(replayed, [1, 2, 3, 4, 5]);
    assert.equal(fake.requests.length, 4, 'the replay asks nothing');
  });

  test('a message_delta without usage is taken as it is', async () => {
    const repo = await scratch.repo({ 'README.md': '# usage\n' });
    const fake = await scratch.fake([{ text: 'Reading.', tools: [README] }, { text: 'Done without usage.' }]);
    fake.quirkNext({ usageInDelta: false });
    fake.quirkNext({ usageInDelta: false });
    const run = await runInProcess(repo.root, fake, 'read the readme');
    assert.equal(run.status, 'finished');
    assert.equal(run.final, 'Done without usage.');
  });

  test('a paused turn is sent back as it is, and the model goes on from it', async () => {
    const repo = await scratch.repo({ 'README.md': '# pause\n' });
    const fake = await scratch.fake([{ text: 'Searching for a long while', stopReason: 'pause_turn' }, { text: 'and here is the answer.' }]);
    const run = await runInProcess(repo.root, fake, 'look it up');
    assert.equal(run.status, 'finished');
    assert.equal(fake.requests.length, 2, 'the paused answer is not the final one');
    const last = fake.requests[1]!.messages.at(-1)!;
    assert.equal(last.role, 'assistant');
    assert.match(JSON.stringify(last.content), /Searching for a long while/);
    assert.equal(run.final, 'and here is the answer.');
  });
});
