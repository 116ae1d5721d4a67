// A run's configuration is pinned in run.json when it is created: a resumed or forked run sends
// the recorded system prompt, tool definitions and max tokens, not the build's, so a run made by
// another build replays without divergence. --model on an existing run is refused, and a changed
// configuration diverges with a message that says which part of the call differs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runAgent } from '../../../src/agent/loop.js';
import { openJournal } from '../../../src/valve/open-journal.js';
import { serializeEntry, type RunConfig, type RunRecord } from '../../../src/journal/entry.js';
import { runRecordPath } from '../../../src/journal/layout.js';
import { JournalStore } from '../../../src/journal/store.js';
import { createScriptedProvider } from '../../../src/model/scripted.js';
import { createTools } from '../../../src/tools/index.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertNoStack, assertStepModes, assertToolPairing, fakeEnv, journalJson, runCli } from '../../helpers/cli.js';

const scratch = useScratch();

const OLD_PROMPT = 'You are the coding agent of an older savepoint build. Read before you write.';

// A run made by "another build": its prompt, tool descriptions and max tokens are not this build's.
async function runFromAnotherBuild(root: string, run: string): Promise<RunConfig> {
  const tools = createTools(root);
  const config: RunConfig = {
    model: 'claude-sonnet-test',
    system: OLD_PROMPT,
    tools: tools.map((t) => ({ name: t.name, description: `(older wording) ${t.description}`, input_schema: { ...t.inputSchema } })),
    maxTokens: 4000,
    compaction: { enabled: true, at: 0.8, contextWindow: 200_000 },
  };
  const journal = await openJournal({ dir: root, run, task: 'read the readme', model: config.model, config });
  try {
    const provider = createScriptedProvider({ turns: [{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }] });
    const outcome = await runAgent({ journal, task: 'read the readme', config, provider: () => provider, tools, limits: { maxTurns: 1 } });
    assert.equal(outcome.limit?.limit, 'max-turns');
  } finally {
    journal.close();
  }
  return config;
}

describe('the pinned run configuration', { concurrency: true }, () => {
  test('a run recorded with another prompt and other tool descriptions resumes through the CLI without divergence, sending what it recorded', async () => {
    const repo = await scratch.repo({ 'README.md': '# pinned\n' });
    const fake = await scratch.fake([{ text: 'never asked' }, { text: 'It is a readme.' }]);
    const config = await runFromAnotherBuild(repo.root, 'older');
    const record = await journalJson<RunRecord>(repo.root, 'runs/older/run.json');
    assert.deepEqual(record.config, config, 'run.json holds the whole configuration');

    const resumed = await runCli(['resume', '--yes', 'older'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertStepModes(resumed.stdout, 2);
    assert.match(resumed.stdout, /It is a readme\./);
    assert.equal(fake.requests.length, 1, 'one live call: the turn the run had not made');
    const sent = fake.requests[0]!;
    assert.equal(sent.model, 'claude-sonnet-test');
    assert.equal(sent.max_tokens, 4000);
    assert.match(JSON.stringify(sent.system), /older savepoint build/);
    assert.ok((sent.tools as Array<{ description: string }>).every((t) => t.description.startsWith('(older wording)')), 'the recorded tool descriptions');
    assertToolPairing(fake.requests);

    const fork = await runCli(['fork', 'older', '--at', '3', '--run', 'older-fork'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(fork.code, 0, fork.stderr);
    assert.deepEqual((await journalJson<RunRecord>(repo.root, 'runs/older-fork/run.json')).config, config, 'a fork copies its parent\'s configuration');
  });

  // One finished run for three cases: --model refused on it, then its pinned prompt changed under
  // it, then --fresh with the other model.
  test('--model on an existing run is refused with a message naming the recorded model; a pinned prompt changed under a run diverges with a message naming the request digest; --fresh takes the other model', async () => {
    const repo = await scratch.repo({ 'README.md': '# digest\n' });
    const fake = await scratch.fake([{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read.' }]);
    const first = await runCli(['run', '--yes', '--model', 'claude-sonnet-a', 'read it'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(first.code, 0, first.stderr);
    const id = /run (\S+)/.exec(first.stdout)![1]!;

    const other = await runCli(['run', '--yes', '--model', 'claude-sonnet-b', 'read it'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(other.code, 2);
    assert.match(other.stderr, /pinned to the configuration recorded when it was created/);
    assert.match(other.stderr, /--model claude-sonnet-b \(it uses claude-sonnet-a\)/);
    assert.match(other.stderr, /--fresh/);
    assertNoStack(other.stderr);
    assert.equal(fake.requests.length, 2, 'the refused command sent nothing');

    // Another tool's wording, committed to the journal as a hand edit of run.json would be.
    const store = await JournalStore.open(repo.root);
    const record = await journalJson<RunRecord>(repo.root, `runs/${id}/run.json`);
    record.config!.system += '\nOne more rule.';
    await store.append([{ path: runRecordPath(id), content: serializeEntry(record) }], `${id} edited run.json`);

    const again = await runCli(['run', '--yes', 'read it'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /diverged from its journal at step 1: the journal recorded model turn 1, and this time the agent asked for it again, but the request digest is/);
    assert.match(again.stderr, /system prompt, tool definitions, max tokens/);
    assert.doesNotMatch(again.stderr, /asked for model turn 1/);
    assert.equal(fake.requests.length, 2, 'nothing was sent');

    const fresh = await runCli(['run', '--yes', '--fresh', '--model', 'claude-sonnet-b', 'read it'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fake.requests[2]!.model, 'claude-sonnet-b');
  });
});
