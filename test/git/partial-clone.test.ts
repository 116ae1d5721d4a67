// A partial clone's left-out object, fetched through git itself from the promisor remote and
// checked against its id; nothing is fetched for a repository that is not a partial clone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fetchLeftOut } from '../../src/git/partial-clone.js';

const dir = mkdtempSync(join(tmpdir(), 'savepoint-partial-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

const origin = join(dir, 'origin');
git(dir, 'init', '-q', origin);
writeFileSync(join(origin, 'big.txt'), 'a file the partial clone leaves out\n');
git(origin, 'add', 'big.txt');
git(origin, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'one');
git(origin, 'config', 'uploadpack.allowFilter', 'true');
const blob = git(origin, 'rev-parse', 'HEAD:big.txt');

test('an object a partial clone left out is fetched from its remote and checked against its id', () => {
  const clone = join(dir, 'partial');
  git(dir, 'clone', '-q', '--no-checkout', '--filter=blob:none', `file://${origin}`, clone);
  const gitdir = join(clone, '.git');
  assert.equal(git(clone, 'cat-file', '--batch-check=%(objectname)', '--batch-all-objects').split('\n').includes(blob), false, 'left out by the clone');
  assert.equal(fetchLeftOut(gitdir, blob, 'blob')?.toString(), 'a file the partial clone leaves out\n');
  assert.equal(fetchLeftOut(gitdir, 'not-an-object-id', 'blob'), undefined);
  assert.equal(fetchLeftOut(gitdir, '0'.repeat(40), 'blob'), undefined, 'the remote does not have it either');
});

test('a repository that is not a partial clone fetches nothing', () => {
  assert.equal(fetchLeftOut(join(origin, '.git'), '0'.repeat(40), 'blob'), undefined);
});
