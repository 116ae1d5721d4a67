// What savepoint knows of the live model before talking to it: the default model, whether a
// credential is there (a blank one is none), and each model's context window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contextWindowFor, DEFAULT_CONTEXT_WINDOW, DEFAULT_MODEL, hasAnthropicCredentials } from '../../src/model/defaults.js';

test('an API key or an auth token is a credential; blank ones are not', () => {
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_API_KEY: 'sk-ant-x' }), true);
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_AUTH_TOKEN: 'tok' }), true);
  assert.equal(hasAnthropicCredentials({ ANTHROPIC_API_KEY: '  ', ANTHROPIC_AUTH_TOKEN: '' }), false);
  assert.equal(hasAnthropicCredentials({}), false);
});

test('Claude models and unknown ones take 200,000 tokens', () => {
  assert.match(DEFAULT_MODEL, /^claude-/);
  assert.equal(contextWindowFor(DEFAULT_MODEL), 200_000);
  assert.equal(contextWindowFor('llama-local'), DEFAULT_CONTEXT_WINDOW);
});
