// Working-tree checkpoints, end to end through the real CLI: after each step that may change files
// the working tree is recorded as a git tree, referenced from the entry and placed at
// runs/<run>/worktree in that step's commit, so `git log -p agent-journal` shows the step's code
// change as an ordinary diff beside its entry and `git diff <base> <checkpoint>` shows what the run
// changed. Steps that change nothing record nothing; big files are named, not silently dropped; the
// user's HEAD and index are untouched.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertFsckClean, gitOut, journalFile, userState } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';
import { runCli } from '../helpers/cli.js';
import { gitWorktreeTree } from '../worktree/support.js';

const scratch = useScratch();

interface Entry {
  step: number;
  kind: string;
  phase: string;
  checkpoint?: string;
  checkpointSkipped?: Array<{ path: string; size: number; reason: string }>;
}

describe('checkpoints in the journal', () => {
  test("each file-changing step's commit carries the working tree; git log -p and git diff show the code", async () => {
    const repo = await scratch.repo({ 'src/app.js': 'const x = 1;\n', 'old.txt': 'obsolete\n', '.gitignore': 'dist/\n' });
    const dir = scratch.dir('savepoint-script-');
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { tools: [{ name: 'write_file', input: { path: 'notes.md', content: '# notes\n' } }] },
          { tools: [{ name: 'edit_file', input: { path: 'src/app.js', old_string: 'x = 1', new_string: 'x = 2' } }] },
          { tools: [{ name: 'read_file', input: { path: 'src/app.js' } }] },
          // One command: delete a tracked file, write an ignored build output, a binary file, and
          // a file over the 10 MB limit.
          { tools: [{ name: 'run_bash', input: { command: "rm old.txt && mkdir -p dist && echo built > dist/out.js && printf 'a\\000b' > data.bin && head -c 11000000 /dev/zero > big.dat" } }] },
          { text: 'Done.' },
        ],
      }),
    );
    const before = await userState(repo.root);
    const base = before.head;
    const result = await runCli(['run', '--yes', '--run', 'cp', '--model', `script:${script}`, 'change some files'], { cwd: repo.root, env: {} });
    assert.equal(result.code, 0, result.stderr);
    // Each step's checkpoint objects are stored with that step's commit: all there, git says.
    await assertFsckClean(repo.root);

    // Steps: #1 model, #2 write_file, #3 model, #4 edit_file, #5 model, #6 read_file, #7 model,
    // #8 run_bash, #9 model.
    const entry = async (step: number, kind: string) =>
      JSON.parse(await journalFile(repo.root, `runs/cp/steps/000/${String(step).padStart(6, '0')}-${kind}.json`)) as Entry;
    const write = await entry(2, 'write_file');
    const edit = await entry(4, 'edit_file');
    const read = await entry(6, 'read_file');
    const bash = await entry(8, 'run_bash');
    for (const e of [write, edit, bash]) assert.match(e.checkpoint ?? '', /^[0-9a-f]{40}$/, `step ${e.step} has a checkpoint`);
    assert.equal(read.checkpoint, undefined, 'a read records no checkpoint');
    assert.equal((await entry(1, 'model')).checkpoint, undefined, 'a model call records no checkpoint');

    // The checkpoint is in the step's own commit, at runs/<run>/worktree.
    const commits = (await gitOut(repo.root, ['log', '--format=%H %s', 'agent-journal'])).split('\n');
    const commitOf = (text: string) => commits.find((c) => c.includes(text))!.split(' ')[0]!;
    for (const [e, subject] of [[write, '#2 write_file notes.md ->'], [edit, '#4 edit_file src/app.js ->'], [bash, '#8 run_bash']] as const) {
      assert.equal(await gitOut(repo.root, ['rev-parse', `${commitOf(subject)}:runs/cp/worktree`]), e.checkpoint, subject);
    }

    // git log -p shows each step's change as an ordinary diff, next to its entry.
    const patch = (subject: string) => gitOut(repo.root, ['show', '--format=', commitOf(subject), '--', 'runs/cp/worktree']);
    assert.match(await patch('#2 write_file notes.md ->'), /\+\+\+ b\/runs\/cp\/worktree\/notes\.md\n@@ -0,0 \+1 @@\n\+# notes/);
    assert.match(await patch('#4 edit_file src/app.js ->'), /--- a\/runs\/cp\/worktree\/src\/app\.js\n\+\+\+ b\/runs\/cp\/worktree\/src\/app\.js\n@@ -1 \+1 @@\n-const x = 1;\n\+const x = 2;/);
    const bashPatch = await patch('#8 run_bash');
    assert.match(bashPatch, /deleted file mode 100644\nindex [0-9a-f]+\.\.0+\n--- a\/runs\/cp\/worktree\/old\.txt/);
    assert.match(bashPatch, /runs\/cp\/worktree\/data\.bin/);
    assert.doesNotMatch(bashPatch, /dist\/out\.js|big\.dat/, 'ignored and oversized files are not in the checkpoint');
    assert.equal(await gitOut(repo.root, ['show', '--format=', commitOf('#6 read_file'), '--', 'runs/cp/worktree']), '', 'a read changes no checkpoint');
    const log = await gitOut(repo.root, ['log', '-p', 'agent-journal', '--', 'runs/cp/worktree']);
    assert.match(log, /-const x = 1;\n\+const x = 2;/);

    // The big file is named in the entry, with its size and why it was left out.
    assert.deepEqual(bash.checkpointSkipped?.map((s) => [s.path, s.size]), [['big.dat', 11_000_000]]);
    assert.match(bash.checkpointSkipped![0]!.reason, /larger than 10 MB/);

    // git diff <base> <checkpoint>: what the run changed, as git sees the working tree (without the
    // file left out).
    const changed = await gitOut(repo.root, ['diff', '--name-status', base, bash.checkpoint!]);
    assert.deepEqual(changed.split('\n').sort(), ['A\tdata.bin', 'A\tnotes.md', 'D\told.txt', 'M\tsrc/app.js']);
    rmSync(join(repo.root, 'big.dat'));
    assert.equal(bash.checkpoint, await gitWorktreeTree(repo.root), 'the last checkpoint is the working tree');
    // The first checkpoint (when the run started) is the base commit's tree.
    const record = JSON.parse(await journalFile(repo.root, 'runs/cp/run.json')) as { startCheckpoint: string };
    assert.equal(record.startCheckpoint, await gitOut(repo.root, ['rev-parse', `${base}^{tree}`]));

    // Nothing of this touched the user's HEAD or index.
    const afterRun = await userState(repo.root);
    assert.equal(afterRun.head, before.head);
    assert.equal(afterRun.symbolic, before.symbolic);
    assert.equal(afterRun.index, before.index);
  });
});

describe('savepoint diff', () => {
  test("counts only the run's changes: the person's uncommitted edits from before the run are not the run's", async () => {
    const repo = await scratch.repo({ 'README.md': '# project\n', 'src/app.js': 'const x = 1;\n' });
    writeFileSync(join(repo.root, 'README.md'), '# project, edited by the person\n'); // before any run, never committed
    const dir = scratch.dir('savepoint-diff-');
    const reads = join(dir, 'reads.json');
    writeFileSync(reads, JSON.stringify({ turns: [{ tools: [{ name: 'read_file', input: { path: 'src/app.js' } }] }, { text: 'read it' }] }));
    assert.equal((await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${reads}`, 'only read the app'], { cwd: repo.root })).code, 0);
    const readOnly = await runCli(['diff', '--stat'], { cwd: repo.root });
    assert.equal(readOnly.code, 0, readOnly.stderr);
    assert.equal(readOnly.stdout.trim(), '', 'a run that only read files changed nothing');
    const writes = join(dir, 'writes.json');
    writeFileSync(writes, JSON.stringify({ turns: [{ tools: [{ name: 'edit_file', input: { path: 'src/app.js', old_string: '1', new_string: '2' } }] }, { text: 'edited' }] }));
    assert.equal((await runCli(['run', '--yes', '--no-sandbox', '--model', `script:${writes}`, 'edit the app'], { cwd: repo.root })).code, 0);
    const edited = await runCli(['diff'], { cwd: repo.root });
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stdout, /\+const x = 2;/);
    assert.doesNotMatch(edited.stdout, /README/, "the person's README edit is not the run's");
  });
});
