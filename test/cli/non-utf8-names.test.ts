// File names that are not UTF-8, end to end through the real CLI and real git: a tracked Latin-1
// name edited by a command and an untracked name of raw bytes are recorded under their very bytes
// with their new content (git ls-tree -z is the judge, and git fsck --strict), `--restore` and a
// resume on a fresh clone write the same bytes back, and what is printed shows the bytes that are
// not UTF-8 as \xNN instead of sending them to the terminal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertFsckClean, gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { runCli } from '../helpers/cli.js';

const scratch = useScratch();

// `café.txt` in Latin-1 (é is 0xe9), and an untracked name with 0xff 0xfe in it.
const TRACKED = Buffer.from([...Buffer.from('caf'), 0xe9, ...Buffer.from('.txt')]);
const UNTRACKED = Buffer.from([...Buffer.from('x'), 0xff, 0xfe, ...Buffer.from('.txt')]);

// The files of a checkpoint tree, by the bytes of their names (hex), as git lists them.
function treeFiles(cwd: string, tree: string): Map<string, Buffer> {
  const out = spawnSync('git', ['ls-tree', '-r', '-z', tree], { cwd });
  assert.equal(out.status, 0, out.stderr.toString());
  const files = new Map<string, Buffer>();
  let at = 0;
  while (at < out.stdout.length) {
    const nul = out.stdout.indexOf(0, at);
    const record = out.stdout.subarray(at, nul);
    const tab = record.indexOf(9);
    const oid = record.subarray(0, tab).toString().split(' ')[2]!;
    const blob = spawnSync('git', ['cat-file', 'blob', oid], { cwd });
    files.set(record.subarray(tab + 1).toString('hex'), blob.stdout);
    at = nul + 1;
  }
  return files;
}

// The names in a directory as bytes (hex), and the content of one by its bytes.
const namesIn = (dir: string) => readdirSync(dir, { encoding: 'buffer' }).map((name) => name.toString('hex')).sort();
const readBytes = (dir: string, name: Buffer) => readFileSync(Buffer.concat([Buffer.from(`${dir}/`), name]), 'utf8');

describe('file names that are not UTF-8', () => {
  test('are recorded under their bytes with their new content, and restored as the same bytes by --restore and on a fresh clone', async () => {
    const repo = await scratch.repo({ 'README.md': '# project\n' });
    writeFileSync(Buffer.concat([Buffer.from(`${repo.root}/`), TRACKED]), 'old\n');
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'a Latin-1 name');
    const script = join(scratch.dir('savepoint-script-'), 'script.json');
    // One command edits the tracked file and makes the untracked one (bash's printf writes the bytes).
    const command = `printf 'new\\n' > "$(printf 'caf\\351.txt')" && printf 'made\\n' > "$(printf 'x\\377\\376.txt')"`;
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'run_bash', input: { command } }] }, { text: 'Done.' }] }));
    const args = ['--yes', '--no-sandbox', '--model', `script:${script}`];
    // Stopped after the command, before the final answer: the run is unfinished, to resume.
    const first = await runCli(['run', ...args, '--run', 'bytes', '--max-steps', '2', 'edit the Latin-1 file'], { cwd: repo.root, env: {} });
    assert.equal(first.code, 3, first.stderr); // stopped at --max-steps

    const entry = JSON.parse(await gitOut(repo.root, ['show', 'agent-journal:runs/bytes/steps/000/000002-run_bash.json'])) as { checkpoint: string };
    const files = treeFiles(repo.root, entry.checkpoint);
    assert.deepEqual([...files.keys()].sort(), [Buffer.from('README.md').toString('hex'), TRACKED.toString('hex'), UNTRACKED.toString('hex')].sort(), 'every name, as its bytes');
    assert.equal(files.get(TRACKED.toString('hex'))?.toString(), 'new\n', 'the tracked file with its new content');
    assert.equal(files.get(UNTRACKED.toString('hex'))?.toString(), 'made\n');
    // The commit's own copy of the checkpoint, too.
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal:runs/bytes/worktree']), entry.checkpoint);
    await assertFsckClean(repo.root, 'fsck --strict');

    // Changed by hand and the untracked one removed: drift names them with the bytes made visible.
    writeFileSync(Buffer.concat([Buffer.from(`${repo.root}/`), TRACKED]), 'by hand\n');
    rmSync(Buffer.concat([Buffer.from(`${repo.root}/`), UNTRACKED]));
    const drifted = await runCli(['resume', ...args, 'bytes'], { cwd: repo.root, env: {} });
    assert.equal(drifted.code, 1, drifted.stdout);
    assert.match(drifted.stderr, /modified caf\\xe9\.txt, deleted x\\xff\\xfe\.txt/);
    assert.doesNotMatch(drifted.stderr, /\ufffd/, 'no replacement character: the name is not lost');
    // (Still short of its final answer: --max-steps again, so the clone below has a run to resume.)
    const restored = await runCli(['resume', ...args, '--restore', '--max-steps', '2', 'bytes'], { cwd: repo.root, env: {} });
    assert.equal(restored.code, 3, restored.stderr);
    assert.equal(readBytes(repo.root, TRACKED), 'new\n');
    assert.equal(readBytes(repo.root, UNTRACKED), 'made\n');

    // A fresh clone of the project with the journal fetched: resume restores the same bytes.
    const clone = join(scratch.dir('savepoint-clone-'), 'clone');
    await gitOut(repo.root, ['clone', '-q', repo.root, clone]);
    await gitOut(clone, ['fetch', '-q', 'origin', 'agent-journal:agent-journal']);
    const elsewhere = await runCli(['resume', ...args, 'bytes'], { cwd: clone, env: {} });
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.deepEqual(namesIn(clone), namesIn(repo.root), 'the same names, byte for byte');
    assert.equal(readBytes(clone, TRACKED), 'new\n');
    assert.equal(readBytes(clone, UNTRACKED), 'made\n');
    assert.ok(!existsSync(join(clone, 'caf\ufffd.txt')));
    await assertFsckClean(clone, 'fsck --strict on the clone');
  });
});
