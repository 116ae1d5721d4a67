// Clean and smudge filters (as git-lfs installs them), with a real filter script, through the real
// CLI: a checkpoint holds a filtered file in its clean form, the very blob `git add` makes of it,
// and `--restore` writes the smudged (working-tree) form, as `git checkout` would, both for a file
// the run changed and for one it never touched. A filter a sandboxed command plants (in a git dir
// it made, or a .gitattributes naming a driver the user never configured) never runs.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, runCli } from '../helpers/cli.js';

const scratch = useScratch();
const hasBwrap = ['/usr/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));

// rot13 is its own inverse: one script is both the clean and the smudge filter.
const rot13 = (text: string) => text.replace(/[a-z]/gi, (c) => String.fromCharCode(((c.toLowerCase().charCodeAt(0) - 97 + 13) % 26) + (c === c.toLowerCase() ? 97 : 65)));

describe('clean and smudge filters', () => {
  test('checkpoints hold the clean form and --restore writes the smudged form; planted filters never run', async () => {
    const dir = scratch.dir('savepoint-filters-');
    const filter = join(dir, 'rot13');
    writeFileSync(filter, '#!/bin/sh\nexec tr a-zA-Z n-za-mN-ZA-M\n');
    chmodSync(filter, 0o755);
    const repo = await scratch.repo({ '.gitattributes': '*.rot filter=rot\n', 'a.rot': 'hello\n', 'b.rot': 'keep me\n' }, { commit: false });
    await repo.git('config', 'filter.rot.clean', filter);
    await repo.git('config', 'filter.rot.smudge', filter);
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'filtered files');
    assert.equal(await repo.git('cat-file', 'blob', 'HEAD:b.rot'), rot13('keep me'), 'git stores the clean form');

    const planted = join(dir, 'planted-ran');
    // The command changes one filtered file, adds another, and plants filters: a nested repository
    // whose own config defines one for all its files, and a root .gitattributes line naming a
    // driver the user never configured.
    const command = [
      `printf 'changed\\n' > a.rot && printf 'fresh\\n' > c.rot`,
      `git init -q nested && git -C nested config filter.evil.clean 'touch ${planted}; cat' && git -C nested config filter.evil.smudge 'touch ${planted}; cat'`,
      `echo '* filter=evil' > nested/.gitattributes && echo x > nested/f.txt`,
      `echo '*.txt filter=evil' >> .gitattributes && echo y > top.txt`,
    ].join(' && ');
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command } }] }, { text: 'Done.' }] }));
    const args = ['--yes', '--model', `script:${script}`, ...(hasBwrap ? [] : ['--no-sandbox'])];
    const first = await runCli(['run', ...args, '--run', 'filtered', '--max-steps', '2', 'change the filtered files'], { cwd: repo.root, env: {} });
    assert.equal(first.code, 3, first.stdout + first.stderr); // stopped at --max-steps, short of its answer

    // The checkpoint's blobs are the ones git itself makes of these files (the clean form).
    const blob = (path: string) => gitOut(repo.root, ['rev-parse', `agent-journal:runs/filtered/worktree/${path}`]);
    const gitsOwn = (path: string, content: string) => gitOut(repo.root, ['hash-object', `--path=${path}`, '--stdin'], { input: content });
    assert.equal(await blob('a.rot'), await gitsOwn('a.rot', 'changed\n'));
    assert.equal(await blob('c.rot'), await gitsOwn('c.rot', 'fresh\n'));
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', await blob('a.rot')]), rot13('changed'));
    assert.equal(await blob('b.rot'), await gitOut(repo.root, ['rev-parse', 'HEAD:b.rot']), 'an untouched file keeps the index blob');
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', await blob('top.txt')]), 'y', 'no driver of that name: stored as it is');

    // Edited by hand (one file the run changed, one it never touched), one removed: --restore
    // writes the working-tree form of each file the run wrote, and never overwrites the file it
    // never touched (this test once expected b.rot put back over the hand edit: that lost it).
    writeFileSync(join(repo.root, 'a.rot'), 'by hand\n');
    writeFileSync(join(repo.root, 'b.rot'), 'by hand\n');
    rmSync(join(repo.root, 'c.rot'));
    const restored = await runCli(['resume', ...args, '--restore', '--max-steps', '2', 'filtered'], { cwd: repo.root, env: {} });
    assert.equal(restored.code, 3, restored.stdout + restored.stderr);
    assert.match(restored.stdout, /--restore: restored the working tree/);
    assert.equal(readFileSync(join(repo.root, 'a.rot'), 'utf8'), 'changed\n', 'smudged, as git checkout writes it, not the clean form');
    assert.equal(readFileSync(join(repo.root, 'b.rot'), 'utf8'), 'by hand\n', 'a file the run never wrote is never overwritten');
    assert.equal(readFileSync(join(repo.root, 'c.rot'), 'utf8'), 'fresh\n');
    // git agrees: a.rot is the run's change, b.rot the person's.
    assert.deepEqual((await gitOut(repo.root, ['status', '--porcelain', '--', 'a.rot', 'b.rot'])).split('\n'), [' M a.rot', ' M b.rot']);
    // The person's a.rot was saved first, through git's own clean filter (as git stash saves it).
    const saved = /saved in (refs\/savepoint\/saved\/filtered\/1)/.exec(restored.stdout.replace(/\s+/g, ' '));
    assert.ok(saved, restored.stdout);
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', `${saved[1]}:a.rot`]), rot13('by hand'));

    // A smudge filter that fails (required, as git-lfs sets it): one clear paragraph, nothing written.
    await repo.git('config', 'filter.rot.smudge', 'false');
    await repo.git('config', 'filter.rot.required', 'true');
    writeFileSync(join(repo.root, 'a.rot'), 'by hand again\n');
    const failing = await runCli(['resume', ...args, '--restore', '--max-steps', '2', 'filtered'], { cwd: repo.root, env: {} });
    assert.equal(failing.code, 1, failing.stdout + failing.stderr);
    assert.match(assertOneParagraph(failing.stderr), /The filter git runs for a\.rot failed while restoring it/);
    assert.equal(readFileSync(join(repo.root, 'a.rot'), 'utf8'), 'by hand again\n', 'nothing was written');

    assert.ok(existsSync(join(repo.root, 'nested', '.git', 'config')), 'the command made its git dir');
    assert.ok(!existsSync(planted), 'a filter the command planted ran on the host');
    await assertFsckClean(repo.root);
  });
});
