// Whether the process loaded the live model's client: not for a scripted model, yes once an
// Anthropic provider is made (what bin/savepoint.js keeps of the compiled code follows it:
// test/cli/compile-cache.test.ts). In a process of its own: the answer is the process's.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createProvider } from '../../src/model/index.js';
import { liveModelLoaded } from '../../src/model/live-loaded.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('a scripted provider leaves it unloaded; an Anthropic provider loads it', async () => {
  assert.equal(liveModelLoaded(), false);
  const script = join(scratch.dir('savepoint-script-'), 'turns.json');
  writeFileSync(script, JSON.stringify({ turns: [{ text: 'Hello.' }] }));
  await createProvider(`script:${script}`);
  assert.equal(liveModelLoaded(), false);
  await createProvider('claude-sonnet-4-5', { apiKey: 'test-key' });
  assert.equal(liveModelLoaded(), true);
});
