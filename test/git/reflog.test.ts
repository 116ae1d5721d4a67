// The journal's reflog (src/git/reflog.ts): written as git writes one, a line where it protects
// something. An append (the new commit's first parent is the old tip) is logged when it is the
// store's first, the first after a move that is not an append, and then one in APPENDS_PER_LINE;
// every other move always. git reads the file back.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { APPENDS_PER_LINE, Reflog } from '../../src/git/reflog.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const oid = (n: number) => n.toString(16).padStart(40, '0');

describe('the reflog of the journal branch', () => {
  it('logs a store\'s first append, one append in APPENDS_PER_LINE, and every other move; another store starts again', async () => {
    const repo = await scratch.repo();
    const ref = 'refs/heads/agent-journal';
    const log = new Reflog(join(repo.root, '.git'));
    log.append(ref, undefined, oid(1), 'savepoint: r #1', true); // created
    for (let n = 2; n <= 2 + APPENDS_PER_LINE; n++) log.append(ref, oid(n - 1), oid(n), `savepoint: r #${n}`, true);
    log.append(ref, oid(7), oid(2 + APPENDS_PER_LINE), 'savepoint: put back', false); // not an append: always
    log.append(ref, oid(2 + APPENDS_PER_LINE), oid(3 + APPENDS_PER_LINE), `savepoint: r #${3 + APPENDS_PER_LINE}`, true); // the first after it
    log.append(ref, oid(3 + APPENDS_PER_LINE), oid(4 + APPENDS_PER_LINE), `savepoint: r #${4 + APPENDS_PER_LINE}`, true);
    new Reflog(join(repo.root, '.git')).append(ref, oid(4 + APPENDS_PER_LINE), oid(5 + APPENDS_PER_LINE), `savepoint: r #${5 + APPENDS_PER_LINE}`, true); // another store's first
    const lines = readFileSync(join(repo.root, '.git/logs', ref), 'utf8').split('\n').filter(Boolean);
    assert.deepEqual(
      lines.map((line) => line.split('\t')[1]),
      ['savepoint: r #1', `savepoint: r #${1 + APPENDS_PER_LINE}`, 'savepoint: put back', `savepoint: r #${3 + APPENDS_PER_LINE}`, `savepoint: r #${5 + APPENDS_PER_LINE}`],
    );
    // Each line is git's: old and new ids, the identity, a time and zone, the message.
    assert.match(lines[1]!, new RegExp(`^${oid(APPENDS_PER_LINE)} ${oid(1 + APPENDS_PER_LINE)} Savepoint Test <test@savepoint\\.invalid> \\d{10} [+-]\\d{4}\\tsavepoint: r #${1 + APPENDS_PER_LINE}$`));
  });
});
