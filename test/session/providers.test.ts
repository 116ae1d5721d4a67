// The model providers of one run: one per model, made on its first call and reused; a provider the
// caller gave (an object, or a function making one) serves every model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelProvider } from '../../src/model/index.js';
import { providerFor } from '../../src/session/providers.js';

const fake = (name: string) => ({ name }) as unknown as ModelProvider;

test("a caller's function is called once per model the run uses, and each model's provider is reused", async () => {
  let made = 0;
  const forModel = providerFor(() => fake(`p${++made}`), () => {}, undefined);
  const a = await forModel('claude-a');
  assert.equal(await forModel('claude-a'), a);
  const b = await forModel('claude-b');
  assert.notEqual(b, a);
  assert.equal(made, 2);
});

test("a caller's provider object serves every model", async () => {
  const given = fake('given');
  const forModel = providerFor(given, () => {}, 5);
  assert.equal(await forModel('claude-a'), given);
  assert.equal(await forModel('claude-b'), given);
});
