// Extended thinking through the real CLI, against a test server that sends thinking and
// redacted_thinking blocks (streamed as the API streams them) and refuses, as the API does, a
// thinking block sent back changed or a tool-use turn sent back without its thinking first: the
// blocks are journaled with their signatures and sent back exactly, live and after a resume; the
// budget is pinned in run.json; on a terminal the thinking shows dimmed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunRecord } from '../../../src/journal/entry.js';
import type { ScriptTurn } from '../../../src/model/script-file.js';
import { useScratch } from '../../helpers/scratch.js';
import { assertStepModes, assertToolPairing, fakeEnv, journalJson, journalPaths, runCli } from '../../helpers/cli.js';

const scratch = useScratch();

const TURNS: ScriptTurn[] = [
  { thinking: 'The readme will say what this project is.', redactedThinking: 'EncryptedOpaqueData==', text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] },
  { text: 'Listing.', tools: [{ name: 'list_files', input: {} }] },
  { text: 'It is a small project.' },
];

describe('extended thinking', () => {
  test('--thinking journals thinking blocks with their signatures and sends them back exactly, also after a resume', async () => {
    const repo = await scratch.repo({ 'README.md': '# thinking\n' });
    const fake = await scratch.fake(TURNS);
    const task = 'say what this project is';
    // On a terminal (colour forced), the thinking streams dimmed after a "thinking:" mark.
    const first = await runCli(['run', '--yes', '--thinking', '2048', '--max-turns', '1', task], { cwd: repo.root, env: fakeEnv(fake, { NO_COLOR: undefined, FORCE_COLOR: '1' }) });
    assert.equal(first.code, 3, first.stderr + first.stdout);
    assert.ok(first.stdout.includes('\x1b[2mthinking: \x1b[22m\x1b[2mThe readme '), JSON.stringify(first.stdout));
    const sent = fake.requests[0]!;
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(sent.max_tokens, 2048 + 8192);

    const id = /run \S*?(say-what\S+)/.exec(first.stdout.replace(/\x1b\[[0-9;]*m/g, ''))![1]!;
    const record = await journalJson<RunRecord>(repo.root, `runs/${id}/run.json`);
    assert.deepEqual(record.config?.thinking, { budgetTokens: 2048 });
    const model = await journalJson<{ result: { content: Array<Record<string, string>> } }>(repo.root, (await journalPaths(repo.root)).find((p) => p.endsWith('000001-model.json'))!);
    assert.equal(model.result.content[0]!.type, 'thinking');
    assert.match(model.result.content[0]!.signature!, /^sig_/);
    assert.deepEqual(model.result.content[1], { type: 'redacted_thinking', data: 'EncryptedOpaqueData==' });

    // Resumed without the flag (it is pinned): the recorded blocks go back exactly, or the server refuses.
    const resumed = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    assertStepModes(resumed.stdout, 2);
    assert.match(resumed.stdout, /thinking: Thinking about turn 1\./);
    assert.equal(fake.requests.length, 3);
    assert.deepEqual((fake.requests[1]!.messages[1] as { content: unknown[] }).content.slice(0, 2), model.result.content.slice(0, 2), 'sent back exactly');
    assert.ok(fake.requests.every((r) => (r.thinking as { budget_tokens: number }).budget_tokens === 2048));
    assertToolPairing(fake.requests);

    const other = await runCli(['run', '--yes', '--thinking', '4096', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(other.code, 2);
    assert.match(other.stderr, /--thinking 4096 \(it uses 2048\)/);
    const low = await runCli(['run', '--yes', '--thinking', '100', 'another task'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(low.code, 2);
    assert.match(low.stderr, /at least 1024/);
  });
});
