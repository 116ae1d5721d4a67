// The library and a repository's `.mcp.json`: startRun does not read it unless the caller trusts
// the repository (`trustRepository: true`), and tells the caller, in a `repository-left-out` event,
// which servers it named that did not start. A server the caller passes in `mcpServers` starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createScriptedProvider, startRun, type SessionEvent } from '../../src/index.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// A repository whose .mcp.json names a "server" that only leaves a marker holding the variable it was given.
async function repoWithServer() {
  const marker = join(scratch.dir('savepoint-marker-'), 'started');
  const repo = await scratch.repo();
  writeFileSync(join(repo.root, '.mcp.json'), JSON.stringify({ mcpServers: { helper: { command: 'sh', args: ['-c', `echo "$KEY" > ${marker}`], env: { KEY: '${SAVEPOINT_TEST_KEY}' } } } }));
  return { root: repo.root, marker };
}

const provider = () => createScriptedProvider({ model: 'scripted-trust', turns: [{ text: 'Explained.' }] });

test("startRun starts none of a repository's .mcp.json servers by default, and says which it left out", async () => {
  const { root, marker } = await repoWithServer();
  const events: SessionEvent[] = [];
  const outcome = await startRun({ dir: root, task: 'explain this code', model: 'scripted-trust', provider: provider(), sandbox: { use: false }, env: { ...process.env, SAVEPOINT_TEST_KEY: 'k1' }, onEvent: (event) => events.push(event) });
  assert.equal(outcome.status, 'finished');
  assert.equal(existsSync(marker), false, 'a server of the repository was started');
  assert.deepEqual(events.filter((event) => event.type === 'repository-left-out'), [{ type: 'repository-left-out', file: '.mcp.json', servers: ['helper'] }]);
});

test('trustRepository: true starts them, with the variables they name', async () => {
  const { root, marker } = await repoWithServer();
  const events: SessionEvent[] = [];
  const outcome = await startRun({ dir: root, task: 'explain this code', model: 'scripted-trust', provider: provider(), sandbox: { use: false }, trustRepository: true, env: { ...process.env, SAVEPOINT_TEST_KEY: 'k2' }, onEvent: (event) => events.push(event) });
  assert.equal(outcome.status, 'finished');
  assert.equal(readFileSync(marker, 'utf8'), 'k2\n');
  assert.equal(events.filter((event) => event.type === 'repository-left-out').length, 0);
  assert.ok(events.some((event) => event.type === 'mcp-unavailable' && event.server === 'helper'), 'it was started (and, not speaking MCP, said to be unavailable)');
});
