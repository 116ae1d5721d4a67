// Mapping SDK errors that the fake server cannot easily provoke: timeouts, missing credentials, bugs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicError, APIConnectionTimeoutError } from '@anthropic-ai/sdk';
import { toModelError } from '../../src/model/anthropic-errors.js';
import { ModelError } from '../../src/errors/index.js';

const context = { model: 'claude-test', baseURL: 'https://api.example.test', maxRetries: 2 };

test('a timeout says the API did not answer in time, after the retries', () => {
  const error = toModelError(new APIConnectionTimeoutError(), context);
  assert.ok(error instanceof ModelError);
  assert.equal(error.data.kind, 'timeout');
  assert.match(error.message, /https:\/\/api\.example\.test did not answer in time \(after 2 retries\)/);
});

test('no credentials at all says how to get a key and points at the demo', () => {
  const sdkError = new AnthropicError('Could not resolve authentication method. Expected one of apiKey, authToken, credentials, config, or profile to be set.');
  const error = toModelError(sdkError, context);
  assert.ok(error instanceof ModelError);
  assert.equal(error.data.kind, 'credentials');
  assert.match(error.message, /ANTHROPIC_API_KEY/);
  assert.match(error.message, /savepoint demo/);
  assert.equal(error.cause, sdkError);
});

test('an error that is not the SDK\'s passes through unchanged', () => {
  const bug = new TypeError('x is not a function');
  assert.equal(toModelError(bug, context), bug);
});
