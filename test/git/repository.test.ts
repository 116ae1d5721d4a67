// The journal in the repositories users really have: linked worktrees, a staged file and a merge
// conflict in progress, packed objects and refs after `git gc`, a bare remote to push to, a
// submodule; and clear refusals where it cannot write safely.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NotARepositoryError, UnsupportedRepositoryError, openJournal } from '../../src/index.js';
import { JournalStore } from '../../src/journal/store.js';
import { readRunEntries } from '../../src/journal/reader.js';
import { assertFsckClean, commitCount, gitOut, journalFile, journalSubjects, runGit, userState } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();
const newRepo = (files?: Record<string, string>): Promise<TempRepo> => scratch.repo(files);
const tempDir = (prefix: string): string => scratch.dir(prefix);

// A few steps of run `run` from `dir`, finished; returns how many functions ran.
async function appendSteps(dir: string, run: string, count = 3): Promise<number> {
  let calls = 0;
  const journal = await openJournal({ dir, run, task: `work in ${run}` });
  for (let i = 1; i <= count; i++) {
    await journal.step('work', { i }, () => (calls++, `result ${i}`), { intent: i === 2, describe: `work ${i}` });
  }
  await journal.finish('finished', { final: 'ok' });
  journal.close();
  return calls;
}

const fileHash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('refusals', () => {
  it('a directory outside any repository: NotARepositoryError that says a git repository is needed', async (t) => {
    const dir = tempDir('savepoint-norepo-');
    if ((await runGit(dir, ['rev-parse', '--git-dir'])).code === 0) return t.skip('the temp directory is inside a git repository');
    await assert.rejects(openJournal({ dir, run: 'r' }), (error: unknown) => {
      assert.ok(error instanceof NotARepositoryError);
      assert.equal(error.code, 'ENOTREPO');
      assert.match(error.message, /not inside a git repository/);
      assert.match(error.message, /git init/);
      return true;
    });
  });

  it('a SHA-256 repository: UnsupportedRepositoryError, and nothing is written to it', async () => {
    const dir = tempDir('savepoint-sha256-');
    await gitOut(dir, ['init', '-q', '--object-format=sha256']);
    await gitOut(dir, ['commit', '-q', '--allow-empty', '-m', 'initial']);
    await assert.rejects(openJournal({ dir, run: 'r' }), (error: unknown) => {
      assert.ok(error instanceof UnsupportedRepositoryError);
      assert.equal(error.code, 'EUNSUPPORTEDREPO');
      assert.match(error.message, /SHA256 object names/);
      assert.match(error.message, /refuses to touch it/);
      return true;
    });
    assert.equal((await runGit(dir, ['rev-parse', '--verify', '-q', 'agent-journal'])).code, 1);
    assert.equal(existsSync(join(dir, '.git/savepoint')), false);
    await assertFsckClean(dir);
  });

  it('a reftable repository: UnsupportedRepositoryError (a real one where git supports it, else its config)', async () => {
    const dir = tempDir('savepoint-reftable-');
    const real = await runGit(dir, ['init', '-q', '--ref-format=reftable']);
    if (real.code !== 0) {
      // This git predates reftable: declare it the way such a repository does.
      await gitOut(dir, ['init', '-q']);
      await gitOut(dir, ['config', '--file', '.git/config', 'extensions.refStorage', 'reftable']);
      await gitOut(dir, ['config', '--file', '.git/config', 'core.repositoryformatversion', '1']);
    }
    await assert.rejects(openJournal({ dir, run: 'r' }), (error: unknown) => {
      assert.ok(error instanceof UnsupportedRepositoryError);
      assert.match(error.message, /reftable/);
      return true;
    });
  });
});

describe('the user checkout is never touched', () => {
  it('from a linked worktree the journal goes to the common git dir, seen from the main checkout; neither checkout changes', async () => {
    const repo = await newRepo({ 'README.md': '# project\n', 'src/app.js': 'console.log(1);\n' });
    const wt = join(tempDir('savepoint-wt-'), 'feature');
    await gitOut(repo.root, ['worktree', 'add', '-q', '-b', 'feature', wt]);
    writeFileSync(join(wt, 'src/app.js'), 'console.log(2);\n');
    await gitOut(wt, ['commit', '-q', '-am', 'feature work']);
    writeFileSync(join(wt, 'notes.txt'), 'untracked\n');
    const mainBefore = await userState(repo.root);
    const wtBefore = await userState(wt);

    assert.equal(await appendSteps(join(wt, 'src'), 'from-worktree'), 3);

    assert.deepEqual(await userState(repo.root), mainBefore);
    assert.deepEqual(await userState(wt), wtBefore);
    assert.ok(existsSync(join(repo.root, '.git/refs/heads/agent-journal')), 'the branch is in the common git dir');
    const wtGitdir = await gitOut(wt, ['rev-parse', '--absolute-git-dir']);
    assert.equal(existsSync(join(wtGitdir, 'refs/heads/agent-journal')), false);
    // Seen from the main checkout, with plain git.
    assert.equal((await journalSubjects(repo.root)).at(-1), 'from-worktree #1 work 1 -> result 1');
    const record = JSON.parse(await journalFile(repo.root, 'runs/from-worktree/run.json'));
    assert.equal(record.baseCommit, wtBefore.head, "the run's base is the worktree's HEAD");
    assert.notEqual(record.baseCommit, mainBefore.head);
    // And the worktree reads it back: replay from a second open.
    assert.equal(await appendSteps(wt, 'from-worktree'), 0);
    await assertFsckClean(repo.root);
  });

  it('with a file staged and a merge conflict in progress, HEAD, index, conflict and working tree stay as they were', async () => {
    const repo = await newRepo({ 'README.md': '# project\n', 'shared.txt': 'base\n' });
    await gitOut(repo.root, ['checkout', '-q', '-b', 'other']);
    writeFileSync(join(repo.root, 'shared.txt'), 'theirs\n');
    await gitOut(repo.root, ['commit', '-q', '-am', 'theirs']);
    await gitOut(repo.root, ['checkout', '-q', 'main']);
    writeFileSync(join(repo.root, 'shared.txt'), 'ours\n');
    await gitOut(repo.root, ['commit', '-q', '-am', 'ours']);
    const merge = await runGit(repo.root, ['merge', 'other']);
    assert.notEqual(merge.code, 0, 'the merge stops on a conflict');
    writeFileSync(join(repo.root, 'staged.txt'), 'staged\n');
    await gitOut(repo.root, ['add', 'staged.txt']);
    writeFileSync(join(repo.root, 'README.md'), '# project, edited\n');

    const before = await userState(repo.root);
    assert.match(before.status, /^UU shared\.txt$/m);
    assert.match(before.status, /^A  staged\.txt$/m);
    const conflicted = readFileSync(join(repo.root, 'shared.txt'), 'utf8');
    const mergeHead = readFileSync(join(repo.root, '.git/MERGE_HEAD'), 'utf8');
    const indexHash = fileHash(join(repo.root, '.git/index'));

    assert.equal(await appendSteps(repo.root, 'mid-merge', 4), 4);

    assert.deepEqual(await userState(repo.root), before);
    assert.equal(readFileSync(join(repo.root, 'shared.txt'), 'utf8'), conflicted);
    assert.equal(readFileSync(join(repo.root, '.git/MERGE_HEAD'), 'utf8'), mergeHead);
    assert.equal(fileHash(join(repo.root, '.git/index')), indexHash, 'the index file is byte for byte the same');
    assert.equal(await commitCount(repo.root), 4 + 1 + 1);
    // The user can still finish their merge.
    writeFileSync(join(repo.root, 'shared.txt'), 'resolved\n');
    await gitOut(repo.root, ['commit', '-q', '-am', 'merge other']);
    assert.equal(await gitOut(repo.root, ['rev-list', '--count', '--merges', 'main']), '1');
    await assertFsckClean(repo.root);
  });

  it('inside a submodule the journal is the submodule repository’s own branch', async () => {
    const lib = await newRepo({ 'lib.js': 'export {};\n' });
    const app = await newRepo();
    await gitOut(app.root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.root, 'vendor/lib']);
    await gitOut(app.root, ['commit', '-q', '-m', 'add submodule']);
    const appBefore = await userState(app.root);

    assert.equal(await appendSteps(join(app.root, 'vendor/lib'), 'in-submodule'), 3);

    const sub = join(app.root, 'vendor/lib');
    assert.equal((await journalSubjects(sub)).length, 5);
    assert.equal((await runGit(app.root, ['rev-parse', '--verify', '-q', 'agent-journal'])).code, 1, 'not in the superproject');
    assert.deepEqual(await userState(app.root), appBefore);
    await assertFsckClean(sub);
  });
});

describe('packed objects and refs', () => {
  it('after git gc and git pack-refs --all between appends, the journal still reads, replays and appends', async () => {
    const repo = await newRepo();
    let calls = 0;
    const work = async (journal: Awaited<ReturnType<typeof openJournal>>, from: number, to: number) => {
      for (let i = from; i <= to; i++) {
        assert.equal(await journal.step('work', { i }, () => (calls++, i * 2), { intent: i % 2 === 0, describe: `work ${i}` }), i * 2);
      }
    };
    const journal = await openJournal({ dir: repo.root, run: 'packed', task: 'gc in between' });
    await work(journal, 1, 4);

    await gitOut(repo.root, ['gc', '--quiet', '--prune=now']);
    const counts = await gitOut(repo.root, ['count-objects', '-v']);
    assert.match(counts, /^count: 0$/m, 'every object is packed');
    assert.equal(existsSync(join(repo.root, '.git/refs/heads/agent-journal')), false, 'the branch is packed');
    assert.match(readFileSync(join(repo.root, '.git/packed-refs'), 'utf8'), / refs\/heads\/agent-journal$/m);

    await work(journal, 5, 6); // the same open journal appends on the packed branch
    await gitOut(repo.root, ['pack-refs', '--all']);
    await work(journal, 7, 8);
    await gitOut(repo.root, ['gc', '--quiet', '--prune=now']); // a second gc: new pack, old one gone
    await work(journal, 9, 10);
    await journal.finish('finished', { final: 'ten' });
    journal.close();
    assert.equal(calls, 10);

    // A fresh open replays everything from packed objects, calling nothing.
    await gitOut(repo.root, ['gc', '--quiet', '--prune=now']);
    assert.ok(readdirSync(join(repo.root, '.git/objects/pack')).some((name) => name.endsWith('.pack')));
    const again = await openJournal({ dir: repo.root, run: 'packed' });
    await work(again, 1, 10);
    assert.deepEqual(again.stats, { replayed: 10, live: 0 });
    assert.equal(again.record.current?.status, 'finished');
    again.close();
    assert.equal(calls, 10);
    assert.equal((await readRunEntries(await JournalStore.open(repo.root), 'packed')).length, 15);
    assert.equal(await commitCount(repo.root), 16);
    await assertFsckClean(repo.root);
  });

  it('a store kept open reads its entries back after each of several repacks (packs replaced under it)', async () => {
    const repo = await newRepo();
    await appendSteps(repo.root, 'long', 6);
    const store = await JournalStore.open(repo.root);
    const expected = (await readRunEntries(store, 'long')).map((e) => JSON.stringify(e));
    for (let round = 1; round <= 3; round++) {
      await gitOut(repo.root, ['gc', '--quiet', '--prune=now']);
      if (round === 2) await gitOut(repo.root, ['repack', '-a', '-d', '-f', '--quiet', '--depth=5', '--window=50']); // deltas
      assert.deepEqual((await readRunEntries(store, 'long')).map((e) => JSON.stringify(e)), expected, `after repack ${round}`);
      await store.append([{ path: `notes/${round}.txt`, content: `round ${round}\n` }], `long note ${round}`);
      assert.equal((await store.fileAt(`notes/${round}.txt`))?.toString(), `round ${round}\n`);
    }
    const fresh = await JournalStore.open(repo.root);
    assert.deepEqual((await readRunEntries(fresh, 'long')).map((e) => JSON.stringify(e)), expected);
    await assertFsckClean(repo.root);
  });
});

describe('the branch as git sees it', () => {
  it('is an orphan with one commit per entry, pushes to a bare repository, and the copy is clean', async () => {
    const repo = await newRepo();
    await appendSteps(repo.root, 'pushed', 4);
    const subjects = await journalSubjects(repo.root);
    assert.deepEqual(subjects.reverse(), [
      'pushed #1 work 1 -> result 1',
      'pushed #2 work 2 (started)',
      'pushed #2 work 2 -> result 2',
      'pushed #3 work 3 -> result 3',
      'pushed #4 work 4 -> result 4',
      'pushed finished: ok',
    ]);
    // An orphan: no history shared with the user's branch.
    const mergeBase = await runGit(repo.root, ['merge-base', 'main', 'agent-journal']);
    assert.equal(mergeBase.code, 1, `merge-base found ${mergeBase.stdout}`);
    assert.equal(await gitOut(repo.root, ['rev-list', '--count', '--max-parents=0', 'agent-journal']), '1');
    assert.equal(await gitOut(repo.root, ['rev-list', '--count', '--merges', 'agent-journal']), '0');
    assert.equal(await gitOut(repo.root, ['log', '-1', '--format=%an <%ae>', 'agent-journal']), 'savepoint <savepoint@localhost>');

    const bare = tempDir('savepoint-bare-');
    await gitOut(bare, ['init', '-q', '--bare']);
    await gitOut(repo.root, ['push', '-q', bare, 'agent-journal']);
    await assertFsckClean(bare);
    assert.equal(await gitOut(bare, ['rev-parse', 'agent-journal']), await gitOut(repo.root, ['rev-parse', 'agent-journal']));
    assert.equal(await commitCount(bare), 6);
    // The pushed copy is a complete journal: a clone replays it.
    const clone = join(tempDir('savepoint-clone-'), 'copy');
    await gitOut(tmpdir(), ['clone', '-q', bare, clone]);
    await gitOut(clone, ['branch', '-q', 'agent-journal', 'origin/agent-journal']);
    assert.equal(await appendSteps(clone, 'pushed', 4), 0);
  });

  it('entries are files under runs/<run>/ named so that a listing reads in order', async () => {
    const repo = await newRepo();
    const journal = await openJournal({ dir: repo.root, run: 'many' });
    for (let i = 1; i <= 102; i++) await journal.step(i % 2 ? 'read_file' : 'run_bash', { i }, () => i);
    journal.close();
    const files = (await gitOut(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal', 'runs/many'])).split('\n');
    assert.equal(files[0], 'runs/many/run.json');
    assert.equal(files[1], 'runs/many/steps/000/000001-read_file.json');
    assert.equal(files[2], 'runs/many/steps/000/000002-run_bash.json');
    assert.ok(files.includes('runs/many/steps/001/000100-run_bash.json'), 'step 100 starts the next shard directory');
    assert.equal(files.at(-1), 'runs/many/steps/001/000102-run_bash.json');
    assert.deepEqual(files.slice(1), [...files.slice(1)].sort());
    const shard = (await gitOut(repo.root, ['ls-tree', '--name-only', 'agent-journal:runs/many/steps/000'])).split('\n');
    assert.equal(shard.length, 99, 'steps 1-99 in shard 000');
  });
});

