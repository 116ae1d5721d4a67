// The one base of every error savepoint raises on purpose: a stable code scripts match on, the facts
// the message was built from, the subclass's own name, a cause kept; and every error class of
// src/errors/ with a code of its own (two classes sharing one could not be told apart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isSavepointError, SavepointError } from '../../src/errors/savepoint-error.js';
import { UsageError } from '../../src/errors/index.js';

test('a subclass keeps its code, data, name and cause; isSavepointError tells ours from bugs', () => {
  class ExampleError extends SavepointError<{ n: number }> {
    constructor(n: number, cause?: unknown) {
      super('EEXAMPLE', `example ${n}`, { n }, { cause });
    }
  }
  const cause = new Error('underneath');
  const error = new ExampleError(3, cause);
  assert.deepEqual([error.code, error.data, error.name, error.message, error.cause], ['EEXAMPLE', { n: 3 }, 'ExampleError', 'example 3', cause]);
  assert.ok(error instanceof Error);
  assert.equal(isSavepointError(error), true);
  assert.equal(isSavepointError(new UsageError('bad')), true);
  assert.equal(isSavepointError(new TypeError('x')), false);
  assert.equal(isSavepointError({ code: 'EUSAGE', message: 'looks like one' }), false);
});

test('every error class of src/errors/ has a code of its own, E and capitals', () => {
  const dir = new URL('../../src/errors/', import.meta.url);
  const codes = new Map<string, string[]>();
  let classes = 0;
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    classes += [...text.matchAll(/\bextends SavepointError\b/g)].length;
    for (const [, code] of text.matchAll(/super\(\s*'([^']+)'/g)) codes.set(code!, [...(codes.get(code!) ?? []), file]);
  }
  assert.ok(classes > 40, 'the classes were read');
  assert.equal([...codes.values()].flat().length, classes, 'each class passes its code as a literal');
  assert.deepEqual([...codes].filter(([, files]) => files.length > 1), [], 'a code used by two classes');
  assert.deepEqual([...codes.keys()].filter((code) => !/^E[A-Z]+$/.test(code)), []);
});
