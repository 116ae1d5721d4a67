// Loading a model script: one clear ESCRIPT paragraph, naming the file, for everything that can be wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScript } from '../../src/model/script-file.js';
import { ScriptError } from '../../src/errors/index.js';

async function withScriptFile(text: string, body: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'savepoint-script-'));
  try {
    const file = join(dir, 'script.json');
    await writeFile(file, text);
    await body(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function loadError(text: string): Promise<ScriptError> {
  let caught: unknown;
  await withScriptFile(text, async (file) => {
    caught = await loadScript(file).then(() => assert.fail('expected an ESCRIPT error'), (e: unknown) => e);
    assert.ok(caught instanceof ScriptError);
    assert.ok(caught.message.includes(file), 'the message names the file');
    assert.doesNotMatch(caught.message, /\n/);
  });
  return caught as ScriptError;
}

test('the example script in fixtures/scripts loads, with defaults filled in', async () => {
  const file = fileURLToPath(new URL('../../fixtures/scripts/example.json', import.meta.url));
  const script = await loadScript(file);
  assert.equal(script.model, 'scripted-demo');
  assert.equal(script.file, file);
  assert.equal(script.turns.length, 2);
  assert.deepEqual(script.turns[0]!.tools, [{ name: 'read_file', input: { path: 'test.js' } }]);
});

test('a missing file says it does not exist', async () => {
  const error = await loadScript('/nonexistent/savepoint/script.json').then(() => assert.fail('expected an error'), (e: unknown) => e);
  assert.ok(error instanceof ScriptError);
  assert.equal(error.code, 'ESCRIPT');
  assert.match(error.message, /^The model script \/nonexistent\/savepoint\/script\.json does not exist\./);
});

test('bad JSON is reported with its line and column', async () => {
  const error = await loadError('{\n  "turns": [\n    { "text": "hi", }\n  ]\n}\n');
  assert.equal(error.code, 'ESCRIPT');
  assert.match(error.message, /is not valid JSON \(.*line 3 column 21/);
});

test('a script without turns is refused', async () => {
  assert.match((await loadError('{ "model": "x" }')).message, /has no "turns" array/);
  assert.match((await loadError('{ "turns": [] }')).message, /has an empty "turns" array/);
  assert.match((await loadError('[1, 2]')).message, /is not a JSON object/);
});

test('a bad tool entry says which one and what a good one looks like', async () => {
  const noName = await loadError('{ "turns": [ { "text": "a" }, { "tools": [ { "input": {} } ] } ] }');
  assert.match(noName.message, /turns\[1\]\.tools\[0\] without a "name" \(each tool entry is \{"name": "read_file", "input": \{\.\.\.\}\}\)/);
  const badInput = await loadError('{ "turns": [ { "tools": [ { "name": "read_file", "input": "test.js" } ] } ] }');
  assert.match(badInput.message, /turns\[0\]\.tools\[0\]\.input that is not a JSON object/);
  const badName = await loadError('{ "turns": [ { "tools": [ { "name": "read file" } ] } ] }');
  assert.match(badName.message, /"read file", which is not a valid tool name/);
});

test('unknown keys, empty turns and bad numbers are refused', async () => {
  assert.match((await loadError('{ "turns": [ { "text": "a", "tool": [] } ] }')).message, /unknown key "tool" in turns\[0\]/);
  assert.match((await loadError('{ "turns": [ { "delayMs": 5 } ] }')).message, /turns\[0\] with neither "text" nor "tools"/);
  assert.match((await loadError('{ "turns": [ { "text": "a", "delayMs": -1 } ] }')).message, /turns\[0\]\.delayMs/);
  assert.match((await loadError('{ "turns": [ { "text": "a", "usage": { "inputTokens": 1.5 } } ] }')).message, /usage\.inputTokens that is not a whole number/);
});
