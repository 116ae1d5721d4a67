// Names as the journal records them: a name with no secret is kept; one with a secret is redacted
// and tagged, the tag the secret book's (so this machine maps it back exactly, and the journal tells
// nothing about the value); names that redact alike stay distinct; a recorded name always fits a
// file name and always says it was redacted.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createRedactor } from '../../src/redact/redactor.js';
import { createRevealer } from '../../src/redact/reveal.js';
import { FileSecretBook } from '../../src/redact/secret-book.js';
import { createNameRecorder, recordPath, revealPath } from '../../src/redact/names.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const SECRET = 'tok-3f9a2c1b7e5d';
const env = { DEPLOY_TOKEN: SECRET };

describe('names in the journal', () => {
  test('redacted and tagged by the book; the same on every call and in another process; revealed back by the tag alone', () => {
    const dir = scratch.dir('savepoint-names-');
    const book = new FileSecretBook(join(dir, 'secrets.json'));
    const record = createNameRecorder(createRedactor(env, { book }).text, book);
    assert.equal(record('plain.txt'), 'plain.txt');
    const recorded = record(`notes-${SECRET}.txt`);
    assert.match(recorded, /^notes-\[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}$/);
    assert.equal(record(`notes-${SECRET}.txt`), recorded);
    const again = new FileSecretBook(join(dir, 'secrets.json'));
    assert.equal(createNameRecorder(createRedactor(env, { book: again }).text, again)(`notes-${SECRET}.txt`), recorded, 'the book keeps the tag');
    // No DEPLOY_TOKEN here: the book alone names it.
    assert.equal(revealPath(`src/${recorded}`, createRevealer({}, again).partial), `src/notes-${SECRET}.txt`);
    assert.equal(revealPath(`src/${recorded}`, createRevealer({}).partial), undefined, 'neither the book nor the value: unknown');
    assert.equal(revealPath(`src/${recorded}`, createRevealer(env).partial), `src/notes-${SECRET}.txt`, 'the value alone names it too');
    assert.equal(revealPath('a~0000abcd/b.txt', undefined), 'a~0000abcd/b.txt', 'an ordinary name that ends like a tag is its own name');
  });

  test('names that redact alike stay distinct, and a recorded name fits in 255 bytes and still says it was redacted', () => {
    const record = createNameRecorder(createRedactor(env).text);
    const named = record(`${SECRET}.txt`);
    const literal = record('[REDACTED:DEPLOY_TOKEN].txt');
    assert.notEqual(named, literal);
    assert.ok(named.startsWith('[REDACTED:DEPLOY_TOKEN].txt~') && literal.startsWith('[REDACTED:DEPLOY_TOKEN].txt~'));
    assert.equal(recordPath(`d-${SECRET}/${SECRET}.txt`, record), `${record(`d-${SECRET}`)}/${named}`);
    const long = record(`${'é'.repeat(120)}${SECRET}`);
    assert.ok(Buffer.byteLength(long) <= 255, long);
    assert.match(long, /\[REDACTED:[A-Z_]+\]~[0-9a-f]{8}$/);
    assert.ok(!long.includes(SECRET));
  });
});
