// Reading what git prints about a working tree: the index's stage-0 entries and submodules, where
// the tree differs from the index (a staged file counts as changed), the untracked and ignored
// paths, HEAD; and the ignore and attributes files the configuration names, made absolute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configuredFiles, GITLINK_MODE, parseIndexListing, parseStatus } from '../../src/worktree/git-listing.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

test('the index listing: stage-0 entries by path (spaces and tabs in names kept), submodules apart, other stages and junk skipped', () => {
  const out = [`100644 ${A} 0\tsrc/a b.ts`, `100755 ${B} 0\trun\t.sh`, `${GITLINK_MODE} ${A} 0\tvendor/lib`, `100644 ${B} 1\tconflict.txt`, 'garbage', `10064x ${A} 0\tbad-mode`, ''].join('\0');
  const { entries, gitlinks } = parseIndexListing(out);
  assert.deepEqual([...entries], [['src/a b.ts', { mode: '100644', oid: A }], ['run\t.sh', { mode: '100755', oid: B }], ['vendor/lib', { mode: GITLINK_MODE, oid: A }]]);
  assert.deepEqual(gitlinks, ['vendor/lib']);
  assert.equal(parseIndexListing('').entries.size, 0);
});

test('status: modified, staged and unmerged files changed, deleted ones deleted, untracked and ignored apart, HEAD read', () => {
  const ordinary = (xy: string, path: string) => `1 ${xy} N... 100644 100644 100644 ${A} ${B} ${path}`;
  const out = [
    `# branch.oid ${B}`,
    '# branch.head main',
    ordinary('.M', 'src/a.ts'),
    ordinary('M.', 'staged file.txt'),
    ordinary('.D', 'gone.txt'),
    `u UU N... 100644 100644 100644 100644 ${A} ${A} ${A} both sides.txt`,
    '? new.txt',
    '? nested/',
    '! build/',
    '',
  ].join('\0');
  assert.deepEqual(parseStatus(out), {
    changes: [{ path: 'src/a.ts', state: 'changed' }, { path: 'staged file.txt', state: 'changed' }, { path: 'gone.txt', state: 'deleted' }, { path: 'both sides.txt', state: 'changed' }],
    untracked: ['new.txt', 'nested/'],
    ignored: new Set(['build/']),
    head: B,
  });
  assert.equal(parseStatus('# branch.oid (initial)\0').head, undefined, 'no commit yet');
});

test('the configured ignore and attributes files, relative ones from the root; none when git has none', () => {
  const repo = (out: string | Error) => ({ root: '/repo', git: () => { if (out instanceof Error) throw out; return out; } });
  assert.deepEqual(configuredFiles(repo('core.excludesfile /home/me/.gitignore\ncore.attributesfile conf/attrs\n')), { excludesFile: '/home/me/.gitignore', attributesFile: '/repo/conf/attrs' });
  assert.deepEqual(configuredFiles(repo(new Error('exit 1'))), { excludesFile: undefined, attributesFile: undefined });
});
