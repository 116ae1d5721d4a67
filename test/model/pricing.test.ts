// The estimate of what model calls cost: list prices matched on the model's name, a scripted model
// free, an unknown one at Sonnet rates and marked assumed; cache writes 1.25× input, reads 0.1×.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateCost, priceFor } from '../../src/model/pricing.js';

test('each family by its name, newest first where names overlap', () => {
  const family = (model: string) => priceFor(model).family;
  assert.equal(family('claude-opus-4-5-20251101'), 'claude-opus-4.5');
  assert.equal(family('claude-opus-4-1'), 'claude-opus');
  assert.equal(family('claude-sonnet-4-5'), 'claude-sonnet');
  assert.equal(family('claude-haiku-4-5'), 'claude-haiku-4.5');
  assert.equal(family('claude-3-5-haiku-latest'), 'claude-haiku-3.5');
  assert.equal(family('claude-3-haiku'), 'claude-haiku-3');
  assert.deepEqual(priceFor('CLAUDE-SONNET-4'), { family: 'claude-sonnet', inputPerMTok: 3, outputPerMTok: 15, assumed: false });
});

test('a scripted model costs nothing; an unknown one is priced as Sonnet and says so', () => {
  for (const model of ['script:turns.json', 'scripted', 'scripted-model']) assert.deepEqual(priceFor(model), { family: 'scripted', inputPerMTok: 0, outputPerMTok: 0, assumed: false });
  assert.deepEqual(priceFor('llama-3'), { family: 'claude-sonnet', inputPerMTok: 3, outputPerMTok: 15, assumed: true });
  assert.equal(priceFor(undefined).assumed, true);
  assert.equal(priceFor('scriptedness').family, 'claude-sonnet', 'only the scripted ids');
});

test('cost adds input, output, cache writes at 1.25× and cache reads at 0.1× the input price', () => {
  const sonnet = priceFor('claude-sonnet-4');
  const cost = estimateCost(sonnet, { input: 1_000_000, output: 1_000_000, cacheCreation: 1_000_000, cacheRead: 1_000_000 });
  assert.ok(Math.abs(cost - (3 + 15 + 3.75 + 0.3)) < 1e-9, String(cost));
  assert.equal(estimateCost(priceFor('script:x'), { input: 5, output: 5, cacheCreation: 5, cacheRead: 5 }), 0);
});
