// The pending ref (src/journal/pending.ts), on a real repository with git itself as the judge: a
// tree nothing else reaches survives `git gc --prune=now` while its run holds it; a release drops
// the ref also after gc packed it (and the folders it leaves empty, but not another run's ref); a
// run id ending in "." still makes a ref name git accepts. How GitRunLocal uses it: test/journal/git-run-local.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { holdPendingTree, pendingRef, releasePendingTree } from '../../src/journal/pending.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

let repo: TempRepo;
let gitDir: string;
before(async () => {
  repo = await createTempRepo({ files: { 'a.txt': 'a\n' }, commit: true });
  gitDir = join(repo.root, '.git');
});
after(async () => {
  await repo.remove();
});

// A tree of one new blob that no commit or ref reaches.
async function looseTree(text: string): Promise<{ tree: string; blob: string }> {
  const blob = await repo.git('hash-object', '-w', repo.write('scratch.txt', text));
  const tree = execFileSync('git', ['mktree'], { cwd: repo.root, input: `100644 blob ${blob}\tscratch.txt\n`, encoding: 'utf8' }).trim();
  return { tree, blob };
}
const exists = (oid: string) => repo.git('cat-file', '-e', oid).then(() => true, () => false);

describe('the pending ref', () => {
  it('keeps a tree nothing else reaches through git gc --prune=now, and lets it go once released, also from packed-refs', async () => {
    const held = await looseTree('held while the model thinks\n');
    const dropped = await looseTree('never held\n');
    await holdPendingTree(gitDir, 'fix-1', held.tree);
    await holdPendingTree(gitDir, 'other', held.tree);
    assert.equal(await repo.git('rev-parse', pendingRef('fix-1')), held.tree);

    await repo.git('gc', '-q', '--prune=now');
    assert.ok(await exists(held.tree), 'the held tree survived gc');
    assert.ok(await exists(held.blob), 'and its blob');
    assert.equal(await exists(dropped.tree), false, 'gc did prune: an unheld tree is gone');
    assert.ok(!existsSync(join(gitDir, pendingRef('fix-1'))), 'gc packed the ref');

    await releasePendingTree(gitDir, 'fix-1');
    assert.equal(await repo.git('for-each-ref', '--format=%(refname)', 'refs/savepoint/'), 'refs/savepoint/pending/other', "released from packed-refs; the other run's ref stays");
    await releasePendingTree(gitDir, 'other');
    assert.equal(await repo.git('for-each-ref', 'refs/savepoint/'), '');
    await releasePendingTree(gitDir, 'other'); // nothing left to release: no error
  });

  it('drops a loose ref and the folders it leaves empty, and not another run\'s', async () => {
    const { tree } = await looseTree('loose\n');
    await holdPendingTree(gitDir, 'one', tree);
    await holdPendingTree(gitDir, 'two', tree);
    await releasePendingTree(gitDir, 'one');
    assert.ok(existsSync(join(gitDir, 'refs/savepoint/pending/two')));
    await releasePendingTree(gitDir, 'two');
    assert.ok(!existsSync(join(gitDir, 'refs/savepoint')), 'the folders it made are gone');
  });

  it('names a run ending in "." with a ref name git accepts', async () => {
    assert.equal(pendingRef('v1.'), 'refs/savepoint/pending/v1._');
    await repo.git('check-ref-format', pendingRef('v1.'));
    const { tree } = await looseTree('dot\n');
    await holdPendingTree(gitDir, 'v1.', tree);
    assert.equal(await repo.git('rev-parse', pendingRef('v1.')), tree);
    await releasePendingTree(gitDir, 'v1.');
  });
});
