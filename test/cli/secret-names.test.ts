// Secrets in names reach the journal redacted, like secrets in contents: a file or directory named
// after a secret is recorded under its redacted name with a tag (`notes-[REDACTED:DEPLOY_TOKEN].txt~3f9a2c1b`),
// a symbolic link's target is redacted, and two names that redact to the same text stay distinct.
// The working tree keeps the real names (redaction guards the journal, never the user's files), no
// object in .git holds the value, and `git fsck --strict` is clean. A restore puts the files back
// under their real names where this machine can tell them, and says which it cannot.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { runCli, runIds, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const scratch = useScratch();
const SECRET = `dpl-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
const TASK = 'make the files named after the token';
const LITERAL = '[REDACTED:DEPLOY_TOKEN].txt'; // what `${SECRET}.txt` redacts to: the two must not collide
// The real names the command makes, and what each holds.
const FILES: Record<string, string> = {
  [`notes-${SECRET}.txt`]: 'notes\n',
  [`dir-${SECRET}/inner.txt`]: 'inner\n',
  [`${SECRET}.txt`]: 'named after it\n',
  [LITERAL]: 'literally a placeholder\n',
};
const COMMAND = [
  `mkdir "dir-${SECRET}"`,
  // The literal name is spelled in two pieces: a placeholder the model writes whole is revealed before a command runs.
  ...Object.entries(FILES).map(([path, content]) => `printf '${content.replace('\n', '\\n')}' > '${path.replace('DEPLOY_TOKEN', "DEPLOY_''TOKEN")}'`),
  `ln -s "/vault/${SECRET}/key" keylink`,
  'echo made',
].join(' && ');

function script(turns: unknown[]): string {
  const file = join(scratch.dir('savepoint-secret-names-'), 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return file;
}

// A run killed in its second model call, after the command made the files (and its checkpoint was recorded).
async function crashedRun(): Promise<{ repo: TempRepo; file: string }> {
  const repo = await scratch.repo({ 'README.md': '# project\n' });
  const file = script([{ tools: [{ name: 'run_bash', input: { command: COMMAND } }] }, { text: 'slow', delayMs: 120_000 }]);
  const cli = startCli(['run', '--yes', '--model', `script:${file}`, TASK], { cwd: repo.root, env: { DEPLOY_TOKEN: SECRET } });
  await waitUntil(() => /#2 .*run_bash.*made/.test(cli.stdout), 'the command recorded', { child: cli });
  cli.kill();
  await cli.result;
  writeFileSync(file, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command: COMMAND } }] }, { text: 'All done.' }] }));
  return { repo, file };
}

// Every object in .git, raw (tree entries' names included), as git itself reads them.
function allObjects(root: string): Buffer {
  return execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: root, maxBuffer: 1 << 28 });
}

function removeMadeFiles(root: string): void {
  for (const path of [...Object.keys(FILES), 'keylink', `dir-${SECRET}`]) rmSync(join(root, path), { recursive: true, force: true });
}

describe('secrets in names', { concurrency: true }, () => {
  test('names, directories and link targets holding a secret are recorded redacted and distinct; the working tree keeps the real names', async () => {
    const { repo } = await crashedRun();
    for (const [path, content] of Object.entries(FILES)) assert.equal(readFileSync(join(repo.root, path), 'utf8'), content, `${path} is in the working tree under its real name`);
    assert.equal(readlinkSync(join(repo.root, 'keylink')), `/vault/${SECRET}/key`, 'the link itself is as the command made it');

    // Every checkpoint tree any commit of the journal holds.
    const trees = new Set<string>();
    for (const commit of (await gitOut(repo.root, ['rev-list', 'agent-journal'])).split('\n')) {
      for (const line of (await gitOut(repo.root, ['ls-tree', '-r', '-d', commit, 'runs/'])).split('\n')) if (line.endsWith('/worktree')) trees.add(line.split(/\s+/)[2]!);
    }
    assert.ok(trees.size >= 1, 'the journal holds checkpoints');
    let made: { tree: string; paths: string[] } | undefined;
    for (const tree of trees) {
      const listing = await gitOut(repo.root, ['ls-tree', '-r', '--name-only', tree]);
      assert.ok(!listing.includes(SECRET), `checkpoint tree ${tree} names no secret:\n${listing}`);
      if (listing.includes('keylink')) made = { tree, paths: listing.split('\n') };
    }
    assert.ok(made, 'the checkpoint after the command is in the journal');
    const tagged = (prefix: string) => made!.paths.filter((path) => path.startsWith(prefix) && /~[0-9a-f]{8}$/.test(path));
    const shown = made.paths.join('\n');
    assert.equal(tagged('notes-[REDACTED:DEPLOY_TOKEN].txt').length, 1, `the notes file is recorded redacted:\n${shown}`);
    assert.equal(made.paths.filter((path) => /^dir-\[REDACTED:DEPLOY_TOKEN\]~[0-9a-f]{8}\/inner\.txt$/.test(path)).length, 1, `the directory is recorded redacted:\n${shown}`);
    const colliding = tagged(LITERAL);
    assert.equal(colliding.length, 2, `${SECRET}.txt and a file literally named ${LITERAL} stay two files:\n${shown}`);
    const contents = await Promise.all(colliding.map((path) => gitOut(repo.root, ['cat-file', 'blob', `${made!.tree}:${path}`])));
    assert.deepEqual(contents.sort(), ['literally a placeholder', 'named after it'], 'each keeps its own content');
    assert.equal(await gitOut(repo.root, ['cat-file', 'blob', `${made.tree}:keylink`]), '/vault/[REDACTED:DEPLOY_TOKEN]/key');
    assert.ok(!allObjects(repo.root).includes(SECRET), 'no object in .git holds the secret, in a name, a link target or a content');
    assert.ok(!(await gitOut(repo.root, ['log', '--all', '--format=%B'])).includes(SECRET), 'no commit message holds it');
    await assertFsckClean(repo.root);
  });

  test('a restore puts the files back under their real names', async () => {
    const { repo, file } = await crashedRun();
    removeMadeFiles(repo.root);
    const result = await runCli(['run', '--yes', '--restore', '--model', `script:${file}`, TASK], { cwd: repo.root, env: { DEPLOY_TOKEN: SECRET } });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /--restore: restored the working tree/);
    assert.doesNotMatch(result.stdout, /not restored/);
    for (const [path, content] of Object.entries(FILES)) assert.equal(readFileSync(join(repo.root, path), 'utf8'), content, `${path} is back under its real name`);
    assert.equal(readlinkSync(join(repo.root, 'keylink')), `/vault/${SECRET}/key`, 'the link points at its real target again');
    assert.ok(!existsSync(join(repo.root, `${LITERAL}~`)), 'no recorded name reached the working tree');
    assert.ok(!allObjects(repo.root).includes(SECRET));
    await assertFsckClean(repo.root);
  });

  test('a machine without the book but with the value restores the real names it can tell apart, and takes their tags', async () => {
    const { repo, file } = await crashedRun();
    removeMadeFiles(repo.root);
    const book = join(repo.root, '.git/savepoint/secrets.json');
    renameSync(book, `${book}.away`);
    const env = { DEPLOY_TOKEN: SECRET };
    const result = await runCli(['run', '--yes', '--restore', '--model', `script:${file}`, TASK], { cwd: repo.root, env });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    // `${SECRET}.txt` and the file literally named `[REDACTED:DEPLOY_TOKEN].txt` reveal alike: neither is guessed.
    const said = result.stdout.replace(/\s+/g, ' ');
    assert.match(said, /2 file\(s\) of the checkpoint were not restored: their names hold a secret this machine has no value for \(\[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}, \[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}\)/);
    for (const path of [`${SECRET}.txt`, LITERAL]) assert.ok(!existsSync(join(repo.root, path)), `${path} is not guessed`);
    for (const path of [`notes-${SECRET}.txt`, `dir-${SECRET}/inner.txt`]) assert.equal(readFileSync(join(repo.root, path), 'utf8'), FILES[path], `${path} is back under its real name`);
    // This machine's book took the journal's tags for them: the files it restored are not seen as renamed.
    const taken = JSON.parse(readFileSync(book, 'utf8')) as { secrets: Record<string, { kind: string; value: string }> };
    const names = Object.values(taken.secrets).filter((entry) => entry.kind === 'FILE_NAME').map((entry) => entry.value).sort();
    assert.deepEqual(names, [`dir-${SECRET}`, `notes-${SECRET}.txt`].sort());
    // By id: the identical command would start a new run, as the files differ from where the run finished.
    const [run] = await runIds(repo.root);
    const again = await runCli(['run', '--yes', '--model', `script:${file}`, '--run', run!, TASK], { cwd: repo.root, env });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.match(
      again.stdout.replace(/\s+/g, ' '),
      /differs from this run's last checkpoint: deleted \[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}, deleted \[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}\. /,
      `only the two files it could not restore differ, nothing is renamed:\n${again.stdout}`,
    );
    assert.ok(!allObjects(repo.root).includes(SECRET));
  });

  test('a machine that knows neither the secret nor the book says which files it cannot restore, and keeps the rest', async () => {
    const { repo, file } = await crashedRun();
    removeMadeFiles(repo.root);
    // Another machine, in effect: no secret book (the tags' real names) and no DEPLOY_TOKEN.
    const book = join(repo.root, '.git/savepoint/secrets.json');
    renameSync(book, `${book}.away`);
    const result = await runCli(['run', '--yes', '--restore', '--model', `script:${file}`, TASK], { cwd: repo.root });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const said = result.stdout.replace(/\s+/g, ' ');
    assert.match(said, /4 file\(s\) of the checkpoint were not restored: their names hold a secret this machine has no value for/);
    assert.match(said, /notes-\[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}/);
    assert.match(said, /restored file\(s\) keep secret placeholders this machine has no value for: keylink/);
    assert.equal(readlinkSync(join(repo.root, 'keylink')), '/vault/[REDACTED:DEPLOY_TOKEN]/key', 'the link is restored with the placeholder it was recorded with');
    for (const path of Object.keys(FILES)) assert.ok(!existsSync(join(repo.root, path)), `${path} is not made up`);
    assert.deepEqual(readFileSync(join(repo.root, 'README.md'), 'utf8'), '# project\n');
    await assertFsckClean(repo.root);
  });
  test('a committed file named after a secret is recorded redacted, even when the checkout is HEAD\'s as it stands', async () => {
    // A clean checkout's first checkpoint may be HEAD's own trees (nothing to build); they name the file in clear.
    const repo = await scratch.repo({ 'README.md': '# project\n', [`notes-${SECRET}.txt`]: 'committed\n' });
    const file = script([{ text: 'Nothing to do.' }]);
    const result = await runCli(['run', '--yes', '--model', `script:${file}`, 'look only'], { cwd: repo.root, env: { DEPLOY_TOKEN: SECRET } });
    assert.equal(result.code, 0, result.stderr);
    const trees = (await gitOut(repo.root, ['ls-tree', '-r', '-d', 'agent-journal', 'runs/'])).split('\n').filter((line) => line.endsWith('/worktree'));
    assert.ok(trees.length >= 1, 'the run recorded a checkpoint');
    for (const line of trees) {
      const listing = await gitOut(repo.root, ['ls-tree', '-r', '--name-only', line.split(/\s+/)[2]!]);
      assert.ok(!listing.includes(SECRET), `the checkpoint names no secret:\n${listing}`);
      assert.match(listing, /notes-\[REDACTED:DEPLOY_TOKEN\]\.txt~[0-9a-f]{8}/);
    }
    await assertFsckClean(repo.root);
  });
});
