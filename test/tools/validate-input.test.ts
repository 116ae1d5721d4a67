// A tool call's input checked against the tool's own schema before it runs: every problem named in
// one sentence for the model (with the parameters it may give), a null optional value taken as not given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolInputSchema } from '../../src/tools/types.js';
import { validateInput } from '../../src/tools/validate-input.js';

const schema: ToolInputSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, offset: { type: 'integer', minimum: 1 }, ratio: { type: 'number' }, all: { type: 'boolean' } },
  required: ['path'],
  additionalProperties: false,
} as ToolInputSchema;

test('valid input passes, and null for an optional parameter means not given', () => {
  assert.equal(validateInput(schema, { path: 'a.txt', offset: 3, ratio: 0.5, all: true }), undefined);
  assert.equal(validateInput(schema, { path: 'a.txt', offset: null }), undefined);
});

test('input that is not an object is refused, saying what it was', () => {
  assert.equal(validateInput(schema, 'a.txt'), 'The input must be a JSON object, not the string "a.txt".');
  assert.equal(validateInput(schema, [1]), 'The input must be a JSON object, not an array.');
  assert.equal(validateInput(schema, null), 'The input must be a JSON object, not null.');
  assert.equal(validateInput(schema, 7), 'The input must be a JSON object, not number 7.');
});

test('every problem is named at once, then the parameters the tool takes', () => {
  assert.equal(
    validateInput(schema, { offset: 0, ratio: Infinity, all: 'yes', extra: 1 }),
    'Invalid input: "path" is required; "offset" must be at least 1, not 0; "ratio" must be a number, not number Infinity; "all" must be true or false, not the string "yes"; "extra" is not a known parameter. Parameters: path, offset, ratio, all.',
  );
  assert.equal(validateInput(schema, { path: null }), 'Invalid input: "path" must be a string, not null. Parameters: path, offset, ratio, all.', 'a required parameter may not be null');
  assert.equal(validateInput(schema, { path: 'a', offset: 1.5 }), 'Invalid input: "offset" must be a whole number, not 1.5. Parameters: path, offset, ratio, all.');
  assert.equal(validateInput(schema, { path: { x: 1 } }), 'Invalid input: "path" must be a string, not an object. Parameters: path, offset, ratio, all.');
  assert.match(validateInput(schema, { path: 5, note: 'x'.repeat(100) })!, /"path" must be a string, not number 5; "note" is not a known parameter/);
});

test('unknown parameters pass when the schema allows them, and a long string is cut in the message', () => {
  const open = { ...schema, additionalProperties: undefined } as ToolInputSchema;
  assert.equal(validateInput(open, { path: 'a', extra: 1 }), undefined);
  const said = validateInput(schema, { path: 'a', all: 'y'.repeat(100) })!;
  assert.ok(said.length < 160, said);
});
