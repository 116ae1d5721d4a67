// createProvider: `script:<file>` picks the scripted model, anything else the Anthropic one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createProvider, DEFAULT_MODEL, prepareLiveModel } from '../../src/model/index.js';
import { rehearseRequest } from '../../src/model/anthropic.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';

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

test('prepareLiveModel rehearses a request in this process: the model\'s server hears nothing, and the live request after it goes out as before', async () => {
  const fake = await startFakeAnthropic({ turns: () => ({ text: 'Noted.' }) });
  const saved = { base: process.env.ANTHROPIC_BASE_URL, token: process.env.ANTHROPIC_AUTH_TOKEN };
  process.env.ANTHROPIC_BASE_URL = fake.url;
  process.env.ANTHROPIC_AUTH_TOKEN = 'token-of-the-environment';
  try {
    await prepareLiveModel('script:fixtures/scripts/example.json'); // a script needs no client: nothing to do
    await prepareLiveModel(DEFAULT_MODEL);
    await prepareLiveModel(); // once per process: the second call is the first one's
    await rehearseRequest(); // the rehearsal itself, whose failure prepareLiveModel keeps to itself
    assert.equal(fake.requests.length, 0, 'the rehearsal went to its own loopback server, not to ANTHROPIC_BASE_URL');
    const provider = await createProvider('claude-opus-4-1', { apiKey: 'k' });
    const response = await provider.complete({ model: provider.name, system: '', messages: [{ role: 'user', content: 'go' }], tools: [], maxTokens: 100 });
    assert.deepEqual(response.content, [{ type: 'text', text: 'Noted.' }]);
    assert.equal(fake.requests.length, 1);
  } finally {
    for (const [name, value] of [['ANTHROPIC_BASE_URL', saved.base], ['ANTHROPIC_AUTH_TOKEN', saved.token]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await fake.close();
  }
});
