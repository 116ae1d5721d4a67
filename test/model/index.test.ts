// createProvider: `script:<file>` picks the scripted model, anything else the Anthropic one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createProvider, DEFAULT_MODEL } from '../../src/model/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('script:<file> loads the script relative to cwd and keeps the name as typed', async () => {
  const provider = await createProvider('script:fixtures/scripts/example.json', { cwd: root });
  assert.equal(provider.name, 'script:fixtures/scripts/example.json');
  const response = await provider.complete({ model: provider.name, system: '', messages: [{ role: 'user', content: 'go' }], tools: [], maxTokens: 100 });
  assert.equal(response.model, 'scripted-demo');
  assert.equal(response.stopReason, 'tool_use');
});

test('a script that is not there is an ESCRIPT error naming the resolved path', async () => {
  await assert.rejects(createProvider('script:nope.json', { cwd: root }), { code: 'ESCRIPT', message: new RegExp(`${root}nope\\.json does not exist`) });
  await assert.rejects(createProvider('script:', { cwd: root }), { code: 'ESCRIPT' });
});

test('any other name is an Anthropic model, and no name means the default model', async () => {
  assert.equal((await createProvider('claude-opus-4-1', { apiKey: 'k', baseURL: 'http://127.0.0.1:9' })).name, 'claude-opus-4-1');
  assert.equal((await createProvider(undefined, { apiKey: 'k', baseURL: 'http://127.0.0.1:9' })).name, DEFAULT_MODEL);
});
