// The redactor that stands between every write and the journal: values of secret-named environment
// variables and well-known key shapes become [REDACTED:NAME]; everything else is left alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRedactor, KEY_PATTERNS, SECRET_NAME } from '../../src/redact/redactor.js';

// Key-shaped test values, assembled at run time so no scanner mistakes this file for a leak.
const fake = (prefix: string, body: string) => `${prefix}${body}`;
const ANTHROPIC = fake('sk-ant-', 'api03-' + 'A1b2C3d4E5f6G7h8I9j0'.repeat(4));
const OPENAI = fake('sk-proj-', 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp'.repeat(2));
const GITHUB = fake('ghp_', 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5');
const GITHUB_PAT = fake('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ');
const AWS = fake('AKIA', 'IOSFODNN7EXAMPLE');
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEA7', 'q2kZ8bX+', '-----END RSA PRIVATE KEY-----'].join('\n');

describe('secrets by environment variable', () => {
  test('values of variables named like secrets are replaced with their name, anywhere in a string', () => {
    const redactor = createRedactor({ DEPLOY_TOKEN: 'tok-1234567890', DB_PASSWORD: 'correct horse battery', MY_SECRET: 's3cr3t-value', STRIPE_KEY: 'rk_live_abcdefgh', HOME: '/home/someone-long' });
    assert.equal(redactor.secretCount, 4);
    assert.equal(redactor.text('curl -H "auth: tok-1234567890" && echo tok-1234567890'), 'curl -H "auth: [REDACTED:DEPLOY_TOKEN]" && echo [REDACTED:DEPLOY_TOKEN]');
    assert.equal(redactor.text('pw=correct horse battery;'), 'pw=[REDACTED:DB_PASSWORD];');
    assert.equal(redactor.text('x s3cr3t-value y rk_live_abcdefgh'), 'x [REDACTED:MY_SECRET] y [REDACTED:STRIPE_KEY]');
    assert.equal(redactor.text('cd /home/someone-long'), 'cd /home/someone-long', 'HOME is not a secret name');
  });

  test('names match KEY, TOKEN, SECRET, PASSWORD in any case and position', () => {
    for (const name of ['ANTHROPIC_API_KEY', 'github_token', 'ClientSecret', 'PGPASSWORD', 'AWS_SECRET_ACCESS_KEY', 'NPM_TOKEN']) assert.match(name, SECRET_NAME, name);
    for (const name of ['PATH', 'HOME', 'USER', 'TERM', 'LANG', 'PWD', 'SHELL', 'NODE_ENV']) assert.doesNotMatch(name, SECRET_NAME, name);
  });

  test('short values are not redacted by value (they would match everywhere)', () => {
    const redactor = createRedactor({ SOME_KEY: '1', OTHER_TOKEN: 'true', SHORT_SECRET: 'abc1234', BLANK_PASSWORD: '       x' });
    assert.equal(redactor.secretCount, 0);
    assert.equal(redactor.text('1 true abc1234'), '1 true abc1234');
  });

  test('a secret that contains another is replaced whole (longest first)', () => {
    const redactor = createRedactor({ INNER_TOKEN: 'abcdefgh12', OUTER_TOKEN: 'xx-abcdefgh12-yy' });
    assert.equal(redactor.text('xx-abcdefgh12-yy and abcdefgh12'), '[REDACTED:OUTER_TOKEN] and [REDACTED:INNER_TOKEN]');
  });

  test('the process environment is the default', () => {
    const name = 'SAVEPOINT_TEST_REDACT_TOKEN';
    process.env[name] = 'value-from-the-process-env';
    try {
      assert.equal(createRedactor().text('value-from-the-process-env'), `[REDACTED:${name}]`);
    } finally {
      delete process.env[name];
    }
  });
});

describe('well-known key shapes, with no environment at all', () => {
  const redactor = createRedactor({});
  const cases: Array<[string, string]> = [
    ['ANTHROPIC_KEY', ANTHROPIC],
    ['OPENAI_KEY', OPENAI],
    ['GITHUB_TOKEN', GITHUB],
    ['GITHUB_TOKEN', GITHUB_PAT],
    ['AWS_ACCESS_KEY', AWS],
    ['PRIVATE_KEY', PEM],
  ];
  for (const [name, value] of cases) {
    test(`${name}: ${value.slice(0, 12)}…`, () => {
      assert.equal(redactor.text(`before ${value} after`), `before [REDACTED:${name}] after`);
      assert.equal(redactor.text(value), `[REDACTED:${name}]`);
    });
  }

  test('every pattern is global (all occurrences go)', () => {
    for (const { pattern } of KEY_PATTERNS) assert.ok(pattern.global, String(pattern));
    assert.equal(redactor.text(`${AWS} ${AWS}`), '[REDACTED:AWS_ACCESS_KEY] [REDACTED:AWS_ACCESS_KEY]');
  });

  test('ordinary text is left alone', () => {
    const text = 'skeleton sk-short task-ant-force ghp_tooShort AKIA123 BEGIN PUBLIC KEY -----BEGIN CERTIFICATE----- risk-management desk-antique';
    assert.equal(redactor.text(text), text);
  });
});

describe('redacting values', () => {
  const redactor = createRedactor({ API_TOKEN: 'token-0123456789' });

  test('every string in a JSON-like value, keys included; other values untouched; the input is not changed', () => {
    const input = {
      command: 'echo token-0123456789',
      output: ['line 1', `key ${AWS}`],
      nested: { 'token-0123456789': { exitCode: 0, ok: true, none: null, when: 12.5 } },
    };
    const copy = structuredClone(input);
    const out = redactor.value(input);
    assert.deepEqual(out, {
      command: 'echo [REDACTED:API_TOKEN]',
      output: ['line 1', 'key [REDACTED:AWS_ACCESS_KEY]'],
      nested: { '[REDACTED:API_TOKEN]': { exitCode: 0, ok: true, none: null, when: 12.5 } },
    });
    assert.deepEqual(input, copy, 'the input is not mutated');
  });

  test('redacting twice changes nothing more', () => {
    const once = redactor.text(`a token-0123456789 b ${ANTHROPIC} c ${PEM}`);
    assert.equal(redactor.text(once), once);
    assert.ok(!once.includes('token-0123456789'));
  });
});
