// Long output on a terminal through a pager, as git's: $SAVEPOINT_PAGER, else $PAGER, else less;
// "cat" or empty is none; a pipe, or text that fits the screen, is written as it is; a pager that
// cannot start is no error (the text is written instead). LESS and LV get git's defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pagerCommand, writePaged } from '../../../src/cli/terminal/pager.js';
import { useScratch } from '../../helpers/scratch.js';

const scratch = useScratch();

function terminal(rows = 5) {
  const written: string[] = [];
  return { out: { isTTY: true, rows, write: (text: string) => void written.push(text) }, written };
}

test('the pager chosen: SAVEPOINT_PAGER, then PAGER, then less; cat or blank turns it off', () => {
  assert.equal(pagerCommand({ SAVEPOINT_PAGER: 'most', PAGER: 'more' }), 'most');
  assert.equal(pagerCommand({ PAGER: ' more -s ' }), 'more -s');
  assert.equal(pagerCommand({}), 'less');
  assert.equal(pagerCommand({ SAVEPOINT_PAGER: 'cat', PAGER: 'less' }), undefined);
  assert.equal(pagerCommand({ PAGER: '  ' }), undefined);
});

test('a pipe, paging off, or text shorter than the screen is written as it is', async () => {
  const long = 'line\n'.repeat(50);
  const pipe: string[] = [];
  await writePaged(long, { isTTY: false, write: (t: string) => void pipe.push(t) }, { PAGER: 'no-such-pager' });
  assert.deepEqual(pipe, [long]);
  const off = terminal();
  await writePaged(long, off.out, { PAGER: 'cat' });
  assert.deepEqual(off.written, [long]);
  const short = terminal(24);
  await writePaged('a\nb\n', short.out, { PAGER: 'no-such-pager' });
  assert.deepEqual(short.written, ['a\nb\n']);
});

test("long text on a terminal goes to the pager's stdin with LESS=FRX and LV=-c; a pager that cannot start falls back", async () => {
  const dir = scratch.dir('savepoint-pager-');
  const long = 'line\n'.repeat(50);
  const paged = terminal();
  await writePaged(long, paged.out, { PATH: process.env.PATH, SAVEPOINT_PAGER: `cat > ${join(dir, 'paged')}; echo "$LESS $LV" > ${join(dir, 'env')}` });
  assert.deepEqual(paged.written, [], 'the pager showed it');
  assert.equal(readFileSync(join(dir, 'paged'), 'utf8'), long);
  assert.equal(readFileSync(join(dir, 'env'), 'utf8'), 'FRX -c\n');
  const missing = terminal();
  await writePaged(long, missing.out, { PATH: process.env.PATH, PAGER: 'no-such-pager-anywhere' });
  assert.deepEqual(missing.written, [long]);
});
