// What the journal's lock files share: reading one that may be gone, and taking over a dead holder's
// lock without ever removing a live holder's (one that changed since it was read, or was renewed
// in the instant of the take-over, is put back).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readQuietly, takeOverLock } from '../../src/locks/lock-file.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('a lock file that is gone reads as undefined', () => {
  const dir = scratch.dir('savepoint-lock-file-');
  writeFileSync(join(dir, 'run.lock'), 'holder\n');
  assert.equal(readQuietly(join(dir, 'run.lock')), 'holder\n');
  assert.equal(readQuietly(join(dir, 'gone.lock')), undefined);
});

test("a dead holder's lock, as it was read, is taken over and leaves nothing behind", () => {
  const dir = scratch.dir('savepoint-lock-file-');
  const path = join(dir, 'run.lock');
  writeFileSync(path, 'dead holder\n');
  assert.equal(takeOverLock(path, 'dead holder\n'), true);
  assert.deepEqual(readdirSync(dir), []);
  assert.equal(takeOverLock(path, 'dead holder\n'), false, 'taken over already by someone else');
});

test('a lock that changed since it was read, or was renewed meanwhile, is put back and stays its holder\'s', () => {
  const dir = scratch.dir('savepoint-lock-file-');
  const path = join(dir, 'run.lock');
  writeFileSync(path, 'a new holder\n');
  assert.equal(takeOverLock(path, 'dead holder\n'), false);
  assert.equal(readFileSync(path, 'utf8'), 'a new holder\n');
  let asked = '';
  assert.equal(takeOverLock(path, 'a new holder\n', (aside) => ((asked = readFileSync(aside, 'utf8')), true)), false);
  assert.equal(asked, 'a new holder\n', 'the renewal is judged on the file moved aside');
  assert.equal(readFileSync(path, 'utf8'), 'a new holder\n');
  assert.deepEqual(readdirSync(dir), ['run.lock']);
});
