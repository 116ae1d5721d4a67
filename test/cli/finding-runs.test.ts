// Finding runs through the real CLI (which run a task finds: through the session, in this process): ids from normalised task text, case kept (and ids made the old
// ways still found, a case-folded one only by its own task), a unique id prefix accepted by log, show, resume, continue --run and fork, `runs` listing
// this worktree's runs unless --all, a run live at its first step listed, a finished run of another
// worktree not replayed for "the same task" here, and `savepoint diff` of a run's whole change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { caseFoldedRunIdForTask, legacyRunIdForTask, runIdForTask } from '../../src/journal/run-id.js';
import { startRun, type RunOutcome } from '../../src/index.js';
import { useScratch } from '../helpers/scratch.js';
import { assertOneParagraph, assertStepModes, gitOut, runCli, runIds, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();

function model(turns: unknown[]): string {
  const path = join(scratch.dir(), 'model.json');
  writeFileSync(path, JSON.stringify({ turns }));
  return `script:${path}`;
}

const WRITE = () => model([{ tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'a note\n' } }] }, { text: 'Wrote the note.' }]);

interface Row {
  id: string;
  status: string;
  steps: number;
  worktree: string | null;
}
// `savepoint run --yes <task>` in this process: every live call approved, commands unconfined (none runs here).
const start = (root: string, task: string, script: string, options: { run?: string } = {}): Promise<RunOutcome> =>
  startRun({ dir: root, task, model: script, sandbox: { use: false }, ...options });
const steps = (outcome: RunOutcome) => ({ run: outcome.run, status: outcome.status, replayed: outcome.replayed, live: outcome.live });

const runsJson = async (cwd: string, all = false) => (JSON.parse((await runCli(['runs', '--json', ...(all ? ['--all'] : [])], { cwd })).stdout) as { runs: Row[] }).runs;

describe('finding runs', { concurrency: true }, () => {
  // Which run a task finds is the session's own logic (startRun, as `savepoint run` calls it): these
  // run in this process, judged by the outcome's run id and its replayed and live step counts (what
  // the CLI prints as the run line and the REPLAYED/LIVE step lines).
  test('"Fix the tests" and "Fix the  tests." are one run, and a run whose id was made the old way is still found', async () => {
    const repo = await scratch.repo();
    const script = WRITE();
    assert.equal((await start(repo.root, 'Fix the tests', script)).status, 'finished');
    const again = await start(repo.root, 'Fix the  tests.', script);
    assert.deepEqual(steps(again), { run: runIdForTask('Fix the tests'), status: 'finished', replayed: 3, live: 0 });
    assert.deepEqual(await runIds(repo.root), [runIdForTask('Fix the tests')]);

    const old = legacyRunIdForTask('Write  the note!');
    assert.notEqual(old, runIdForTask('Write  the note!'));
    assert.equal((await start(repo.root, 'Write  the note!', script, { run: old })).status, 'finished');
    const found = await start(repo.root, 'Write  the note!', script);
    assert.deepEqual(steps(found), { run: old, status: 'finished', replayed: 3, live: 0 });
    assert.equal((await runIds(repo.root)).length, 2);
  });

  test('two tasks that differ only in case are two runs: the second goes live instead of replaying the first one\'s answer', async () => {
    const repo = await scratch.repo();
    const first = model([{ text: 'Answer to the upper-case task.' }]);
    const second = model([{ text: 'Answer to the lower-case task.' }]);
    assert.equal((await start(repo.root, 'Rename README to readme', first)).status, 'finished');
    const other = await start(repo.root, 'rename readme to README', second);
    assert.deepEqual(steps(other), { run: runIdForTask('rename readme to README'), status: 'finished', replayed: 0, live: 1 });
    assert.equal(other.final, 'Answer to the lower-case task.');
    assert.equal((await runIds(repo.root)).length, 2);
  });

  test('a run an older build made under the case-folded id is found by its own task, and not by a task that differs from it in case', async () => {
    const repo = await scratch.repo();
    const folded = caseFoldedRunIdForTask('Write The Note');
    // The lower-case task's current id is the upper-case task's old case-folded one: the digests meet.
    assert.equal(folded, runIdForTask('write the note'));
    const script = WRITE();
    assert.equal((await start(repo.root, 'Write The Note', script, { run: folded })).status, 'finished');

    const found = await start(repo.root, 'Write The Note', script);
    assert.deepEqual(steps(found), { run: folded, status: 'finished', replayed: 3, live: 0 });

    const lower = await start(repo.root, 'write the note', model([{ text: 'A new answer.' }]));
    assert.deepEqual(steps(lower), { run: `${folded}-2`, status: 'finished', replayed: 0, live: 1 });
    assert.equal(lower.final, 'A new answer.');
    assert.deepEqual(await runIds(repo.root), [folded, `${folded}-2`]);
  });

  test('a unique id prefix works for log, show, resume, continue --run and fork; an ambiguous one says which runs it could be', async () => {
    const repo = await scratch.repo();
    const script = model([{ tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read.' }, { text: 'Again.' }]);
    for (const id of ['alpha-one', 'alpha-two', 'beta-one']) assert.equal((await runCli(['run', '--yes', '--model', script, '--run', id, `read it for ${id}`], { cwd: repo.root })).code, 0);
    assert.match((await runCli(['log', 'bet'], { cwd: repo.root })).stdout, /^run beta-one/);
    assert.match((await runCli(['show', 'beta', '2'], { cwd: repo.root })).stdout, /read_file/);
    const resumed = await runCli(['resume', 'beta'], { cwd: repo.root });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /run beta-one/);
    const continued = await runCli(['continue', '--yes', '--model', script, '--run', 'alpha-t', 'once more'], { cwd: repo.root });
    assert.equal(continued.code, 0, continued.stderr);
    assert.match(continued.stdout, /run alpha-two/);
    const fork = await runCli(['fork', 'beta-o', '--at', '2'], { cwd: repo.root });
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, /Forked beta-one at step 2 as beta-one-fork-2/);
    const ambiguous = await runCli(['log', 'alpha'], { cwd: repo.root });
    assert.equal(ambiguous.code, 1);
    assert.match(assertOneParagraph(ambiguous.stderr), /"alpha" is the start of 2 run ids \(alpha-one, alpha-two\)/);
  });

  test('runs lists this worktree\'s runs and --all every worktree\'s; a finished run of another worktree is not replayed for the same task here', async () => {
    const repo = await scratch.repo();
    const other = join(scratch.dir(), 'other');
    await gitOut(repo.root, ['worktree', 'add', '-q', '-b', 'other', other]);
    const script = WRITE();
    assert.equal((await runCli(['run', '--yes', '--model', script, 'write the note'], { cwd: repo.root })).code, 0);
    assert.equal((await runCli(['run', '--yes', '--model', script, '--run', 'over-there', 'a task over there'], { cwd: other })).code, 0);

    assert.deepEqual((await runsJson(repo.root)).map((r) => [r.id, r.worktree]), [[runIdForTask('write the note'), repo.root]]);
    assert.deepEqual((await runsJson(other)).map((r) => [r.id, r.worktree]), [['over-there', other]]);
    assert.deepEqual((await runsJson(repo.root, true)).map((r) => r.id).sort(), [runIdForTask('write the note'), 'over-there'].sort());
    assert.match((await runCli(['runs'], { cwd: repo.root })).stdout, /1 more run in other worktrees of this repository: "savepoint runs --all" lists them/);
    // continue takes this worktree's most recent run, not the newer one of the other worktree.
    const followUp = await runCli(['continue', '--yes', '--model', script, 'and sign it'], { cwd: repo.root });
    assert.equal(followUp.code, 0, followUp.stderr);
    assert.match(followUp.stdout, new RegExp(`run ${runIdForTask('write the note')}`));

    const there = await runCli(['run', '--yes', '--model', script, 'write the note'], { cwd: other });
    assert.equal(there.code, 1);
    const message = assertOneParagraph(there.stderr);
    assert.match(message, new RegExp(`finished in ${repo.root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} on branch main, not here`));
    assert.match(message, /--fresh/);
    const fresh = await runCli(['run', '--yes', '--fresh', '--model', script, 'write the note'], { cwd: other });
    assert.equal(fresh.code, 0, fresh.stderr);
    assertStepModes(fresh.stdout, 0);
    assert.match(fresh.stdout, new RegExp(`run ${runIdForTask('write the note')}-2`));
  });

  test('a run live at its first step is listed as running', async () => {
    const repo = await scratch.repo();
    const slow = model([{ delayMs: 30_000, text: 'Thinking for a long time.' }]);
    const live = startCli(['run', '--yes', '--model', slow, 'think slowly'], { cwd: repo.root });
    await waitUntil(() => /savepoint {2}run/.test(live.stdout), 'the run to start', { child: live });
    // Looked at until the run's record is there (a fixed 300 ms stood for that), for 90 s at most.
    const listed = (rows: Row[]) => rows.map((r) => [r.id, r.status, r.steps]);
    let rows = await runsJson(repo.root);
    for (const until = Date.now() + 90_000; rows.length === 0 && Date.now() < until; rows = await runsJson(repo.root)) await new Promise((resolve) => setTimeout(resolve, 100));
    live.kill();
    await live.result;
    assert.deepEqual(listed(rows), [[runIdForTask('think slowly'), 'running', 0]]);
  });

  test('savepoint diff shows what the run changed in total, from its base commit to its last checkpoint', async () => {
    const repo = await scratch.repo({ 'README.md': '# one\n' });
    const script = model([
      { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'a note\n' } }] },
      { tools: [{ name: 'edit_file', input: { path: 'README.md', old_string: '# one', new_string: '# two' } }] },
      { text: 'Done.' },
    ]);
    assert.equal((await runCli(['run', '--yes', '--model', script, 'change two files'], { cwd: repo.root })).code, 0);
    const diff = await runCli(['diff', runIdForTask('change two files').slice(0, 10)], { cwd: repo.root });
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /diff --git a\/README\.md b\/README\.md[\s\S]*-# one\n\+# two/);
    assert.match(diff.stdout, /new file mode[\s\S]*\+a note/);
    assert.match((await runCli(['diff', '--stat'], { cwd: repo.root })).stdout, /2 files changed, 2 insertions\(\+\), 1 deletion\(-\)/);
  });
});
