// The field checks for records read back from a journal (src/journal/fields.ts), on their own: an
// object id is 40 lower-case hex digits (never something git reads as an option); a string is a
// string within its limit; a count a safe whole number from its minimum; an amount finite and from
// 0; a flag true or false; absent passes only where optional, null only where nullable. Each
// refusal names the field. Records made of them: test/journal/entry.test.ts, test/cli/hostile-journal.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCount, checkString, isObject, MAX_NAME_CHARS, OBJECT_ID, optionalAmount, optionalFlag, optionalObjectId, type Fail } from '../../src/journal/fields.js';

// What a check said: the reason it refused with, or undefined when it let the value pass.
function said(check: (fail: Fail) => void): string | undefined {
  try {
    check((reason) => {
      throw new Error(reason);
    });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('journal field checks', () => {
  it('an object id is 40 lower-case hex digits, and only when present', () => {
    assert.ok(OBJECT_ID.test('0123456789abcdef0123456789abcdef01234567'));
    for (const bad of ['0123456789ABCDEF0123456789abcdef01234567', '--upload-pack=x', 'a'.repeat(39), 'a'.repeat(41), 42])
      assert.equal(said((fail) => optionalObjectId({ tree: bad }, 'tree', fail)), 'its tree is not an object id (40 hex digits)', String(bad));
    assert.equal(said((fail) => optionalObjectId({}, 'tree', fail)), undefined);
  });

  it('a string within its limit; absent or null only where allowed', () => {
    assert.equal(said((fail) => checkString({ host: 'a' }, 'host', fail)), undefined);
    assert.equal(said((fail) => checkString({}, 'host', fail)), 'its host is missing');
    assert.equal(said((fail) => checkString({ host: 7 }, 'host', fail)), 'its host is not a string');
    assert.equal(said((fail) => checkString({}, 'host', fail, { optional: true })), undefined);
    assert.equal(said((fail) => checkString({ host: null }, 'host', fail, { optional: true })), 'its host is not a string');
    assert.equal(said((fail) => checkString({ host: null }, 'host', fail, { nullable: true })), undefined);
    assert.equal(said((fail) => checkString({ host: 'x'.repeat(MAX_NAME_CHARS) }, 'host', fail)), undefined);
    assert.equal(said((fail) => checkString({ host: 'x'.repeat(MAX_NAME_CHARS + 1) }, 'host', fail)), `its host is ${MAX_NAME_CHARS + 1} characters long, more than the ${MAX_NAME_CHARS} it may hold`);
    assert.equal(said((fail) => checkString({ task: 'x'.repeat(10) }, 'task', fail, { max: 9 })), 'its task is 10 characters long, more than the 9 it may hold');
  });

  it('a count is a safe whole number from its minimum; an amount finite from 0; a flag true or false', () => {
    for (const good of [0, 3, Number.MAX_SAFE_INTEGER]) assert.equal(said((fail) => checkCount({ step: good }, 'step', fail)), undefined);
    for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '3', Number.NaN, undefined])
      assert.equal(said((fail) => checkCount({ step: bad }, 'step', fail)), 'its step is not a whole number', String(bad));
    assert.equal(said((fail) => checkCount({ step: 0 }, 'step', fail, { min: 1 })), 'its step is not a whole number from 1 up');
    assert.equal(said((fail) => checkCount({}, 'step', fail, { optional: true })), undefined);

    for (const good of [0, 1.25, undefined]) assert.equal(said((fail) => optionalAmount({ costUsd: good }, 'costUsd', fail)), undefined);
    for (const bad of [-0.01, Number.POSITIVE_INFINITY, Number.NaN, '1s'])
      assert.equal(said((fail) => optionalAmount({ costUsd: bad }, 'costUsd', fail)), 'its costUsd is not a number from 0 up', String(bad));

    for (const good of [true, false, undefined]) assert.equal(said((fail) => optionalFlag({ killed: good }, 'killed', fail)), undefined);
    for (const bad of [0, 'true', null]) assert.equal(said((fail) => optionalFlag({ killed: bad }, 'killed', fail)), 'its killed is not true or false');
  });

  it('a plain object is neither null nor an array', () => {
    assert.deepEqual([{}, { a: 1 }, null, [], 'x', 1].map(isObject), [true, true, false, false, false, false]);
  });
});
