// Which values count as secrets, their base64 forms, the secret book's placeholders, and revealing
// placeholders back into values: the pure parts, and the book on disk.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { UnknownSecretError } from '../../src/errors/index.js';
import { createRedactor } from '../../src/redact/redactor.js';
import { createRevealer } from '../../src/redact/reveal.js';
import { FileSecretBook, secretBookPath } from '../../src/redact/secret-book.js';
import { encodedForms, secretVariables } from '../../src/redact/secret-values.js';
import { openRunSecrets } from '../../src/redact/run-secrets.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const AWS = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const OTHER_AWS = ['AKIA', 'Z7Q2X9W4V6T8R3P5'].join('');

describe('redacting values', () => {
  test('copy-on-write: parts with no secret come back as they are, the changed path is copied, the input is untouched', () => {
    const redactor = createRedactor({ DEPLOY_TOKEN: 'tok-1234567890' });
    const clean = { kind: 'run_bash', output: { stdout: 'ok', lines: ['a', 'b'] }, n: 3, none: null };
    assert.equal(redactor.value(clean), clean);
    const untouched = { lines: ['x', 'y'] };
    const dirty = { a: untouched, b: ['plain', 'token=tok-1234567890', 'after'], [`k-tok-1234567890`]: 1, z: 2 };
    const out = redactor.value(dirty);
    assert.deepEqual(out, { a: { lines: ['x', 'y'] }, b: ['plain', 'token=[REDACTED:DEPLOY_TOKEN]', 'after'], 'k-[REDACTED:DEPLOY_TOKEN]': 1, z: 2 });
    assert.deepEqual(Object.keys(out), ['a', 'b', 'k-[REDACTED:DEPLOY_TOKEN]', 'z']);
    assert.equal(out.a, untouched);
    assert.notEqual(out, dirty);
    assert.equal(dirty.b[1], 'token=tok-1234567890');
  });
});

describe('which secret-named variables are secrets', () => {
  test('an ordinary word, a short value and a file path are not; passphrases, tokens and mixed-case letters are', () => {
    const dir = scratch.dir();
    const file = join(dir, 'creds.json');
    writeFileSync(file, '{}');
    const { secrets, ignored } = secretVariables(
      {
        SECRET_KEY_BASE: 'development',
        RAILS_MASTER_KEY: 'Production',
        APP_PASSWORD: 'CHANGEME',
        SHORT_TOKEN: 'abc1234',
        GOOGLE_APPLICATION_CREDENTIALS: file,
        MISSING_KEY_FILE: '/no/such/file/anywhere',
        DB_PASSWORD: 'correct horse battery',
        DEPLOY_TOKEN: 'tok-1234567890',
        LETTERS_SECRET: 'QmXkLpZrTyWvBn',
        EMPTY_TOKEN: '',
        PATH: '/usr/bin',
      },
      (value) => value === file,
    );
    assert.deepEqual(secrets.map((s) => s.name).sort(), ['DB_PASSWORD', 'DEPLOY_TOKEN', 'LETTERS_SECRET', 'MISSING_KEY_FILE']);
    assert.deepEqual(Object.fromEntries(ignored.map((i) => [i.name, i.reason])), {
      SECRET_KEY_BASE: 'its value is an ordinary word',
      RAILS_MASTER_KEY: 'its value is an ordinary word',
      APP_PASSWORD: 'its value is an ordinary word',
      SHORT_TOKEN: 'its value is shorter than 8 characters',
      GOOGLE_APPLICATION_CREDENTIALS: 'its value is the path of a file',
    });
  });

  test('debug output names each ignored variable once per process, only with SAVEPOINT_DEBUG=1', () => {
    const lines: string[] = [];
    const git = scratch.dir();
    openRunSecrets(git, { SECRET_KEY_BASE: 'development' }, (line) => lines.push(line));
    assert.equal(lines.length, 0);
    openRunSecrets(git, { SECRET_KEY_BASE: 'development', SAVEPOINT_DEBUG: '1' }, (line) => lines.push(line));
    openRunSecrets(git, { SECRET_KEY_BASE: 'development', SAVEPOINT_DEBUG: '1' }, (line) => lines.push(line));
    assert.deepEqual(lines, ['savepoint debug: SECRET_KEY_BASE is not treated as a secret: its value is an ordinary word.']);
  });
});

describe('base64 forms', () => {
  const token = 'tok-9f8e7d6c5b4a3210';
  const redactor = createRedactor({ DEPLOY_TOKEN: token });

  test('a value encoded alone, or after other bytes (user:token), is found inside longer base64 text', () => {
    for (const prefix of ['', 'a', 'ab', 'user:', 'deploy-bot:']) {
      for (const kind of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${token}\n`).toString(kind);
        const out = redactor.text(`Authorization: Basic ${encoded}`);
        assert.match(out, /\[REDACTED:DEPLOY_TOKEN:base64(?:url)?(?:\+[12])?\]/, `${kind} after ${JSON.stringify(prefix)}: ${out}`);
        assert.ok(!out.includes(encoded.slice(8, 20)), 'the encoded middle is gone');
      }
    }
  });

  test('each form reveals back to the exact text it replaced', () => {
    const revealer = createRevealer({ DEPLOY_TOKEN: token });
    for (const prefix of ['', 'x', 'xy']) {
      const text = `data: ${Buffer.from(`${prefix}${token}`).toString('base64')}`;
      assert.equal(revealer.text(redactor.text(text)), text);
    }
    assert.equal(encodedForms('short').length, 0, 'too short to be told from chance');
  });
});

describe('the secret book', () => {
  test('one placeholder per value, the same one again later and in another process; the file is private', () => {
    const git = scratch.dir();
    const path = secretBookPath(git);
    const book = new FileSecretBook(path);
    const redactor = createRedactor({}, { book });
    const first = redactor.text(`a=${AWS} b=${OTHER_AWS} c=${AWS}`);
    const [p1, p2, p3] = first.match(/\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]/g)!;
    assert.equal(p1, p3);
    assert.notEqual(p1, p2);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(git, 'savepoint')).mode & 0o777, 0o700);
    // A second process (a resume) reads the same book: same placeholders, and it reveals them.
    const again = new FileSecretBook(path);
    assert.equal(createRedactor({}, { book: again }).text(AWS), p1);
    assert.equal(createRevealer({}, again).text(first), `a=${AWS} b=${OTHER_AWS} c=${AWS}`);
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).format, 'savepoint/secrets@1');
  });

  test('revealing: environment placeholders from this environment, book ones from the book, unknown ones throw naming the secret', () => {
    const book = new FileSecretBook(secretBookPath(scratch.dir()));
    const redactor = createRedactor({ DEPLOY_TOKEN: 'tok-1234567890' }, { book });
    const shown = redactor.value({ content: `token=tok-1234567890 key=${AWS}`, n: 3 });
    assert.match(shown.content, /^token=\[REDACTED:DEPLOY_TOKEN\] key=\[REDACTED:AWS_ACCESS_KEY:[0-9a-f]{8}\]$/);
    assert.deepEqual(createRevealer({ DEPLOY_TOKEN: 'tok-1234567890' }, book).value(shown), { content: `token=tok-1234567890 key=${AWS}`, n: 3 });
    // Another machine: its own value of the variable; no book, no key.
    assert.equal(createRevealer({ DEPLOY_TOKEN: 'tok-other-machine' }, book).text('[REDACTED:DEPLOY_TOKEN]'), 'tok-other-machine');
    assert.throws(() => createRevealer({}, book).text(shown.content), (error: unknown) => error instanceof UnknownSecretError && error.data.variable === 'DEPLOY_TOKEN');
    const elsewhere = new FileSecretBook(secretBookPath(scratch.dir()));
    assert.throws(
      () => createRevealer({ DEPLOY_TOKEN: 'tok-1234567890' }, elsewhere).text(shown.content),
      (error: unknown) => error instanceof UnknownSecretError && /AWS_ACCESS_KEY/.test(error.data.placeholder) && error.data.variable === undefined,
    );
    const partial = createRevealer({}, book).partial(shown.content);
    assert.equal(partial.text, `token=[REDACTED:DEPLOY_TOKEN] key=${AWS}`);
    assert.deepEqual(partial.unknown, ['[REDACTED:DEPLOY_TOKEN]']);
    // Text with no placeholder comes back as it is (the same object for values).
    const plain = { command: 'npm test' };
    assert.equal(createRevealer({}).value(plain), plain);
  });
});
