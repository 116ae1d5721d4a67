// A step's key: the same call with its input's keys in any order gets the same key, so a replay finds
// its recorded result; any other input, or another kind, gets another key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, stepKey } from '../../src/valve/key.js';

describe('step keys', () => {
  it('writes JSON with keys sorted at every level and undefined members dropped (null in an array, as JSON.stringify does)', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined }], c: null } }), '{"a":{"c":null,"d":[3,{"z":1}]},"b":1}');
    assert.equal(canonicalJson([undefined, 'x']), '[null,"x"]');
    assert.equal(canonicalJson('plain'), '"plain"');
    assert.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }));
  });

  it('keys a step by its kind and a digest of its canonical input', () => {
    const key = stepKey('run_bash', { command: 'npm test', timeout: 60 });
    assert.match(key, /^run_bash:[0-9a-f]{16}$/);
    assert.equal(stepKey('run_bash', { timeout: 60, command: 'npm test', cwd: undefined }), key);
    assert.notEqual(stepKey('run_bash', { command: 'npm test', timeout: 61 }), key);
    assert.notEqual(stepKey('read_file', { command: 'npm test', timeout: 60 }), key);
    assert.equal(stepKey('read_file', { command: 'npm test', timeout: 60 }).split(':')[1], key.split(':')[1], 'the digest is of the input alone; the kind is the prefix');
  });
});
