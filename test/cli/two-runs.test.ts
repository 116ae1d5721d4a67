// Two runs, one working tree, with real processes: while run A is live (held in a run_bash that
// waits for a file the test makes), run B may not go live in the same working tree — not even to
// --restore its own checkpoint, which would undo the edit A had finished and recorded. B is told
// which run holds the tree and to use `git worktree add`; in a linked worktree B runs at once, beside
// A. Once A ends (or is killed), the working tree is free again, but B's --restore still may not
// undo the edit A finished.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gitOut } from '../helpers/git.js';
import { assertOneParagraph, runCli, startCli, waitUntil, type CliProcess } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function scriptFile(turns: unknown[]): string {
  const file = join(scratch.dir('savepoint-two-runs-'), 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return file;
}

// Run A: edits a.txt (a finished, recorded step), then waits in run_bash until `go` exists.
function startA(root: string, go: string): CliProcess {
  const script = scriptFile([
    { tools: [{ name: 'write_file', input: { path: 'a.txt', content: 'edited by A\n' } }] },
    { tools: [{ name: 'run_bash', input: { command: `while [ ! -e '${go}' ]; do sleep 0.05; done; echo released` } }] },
    { text: 'A is done.' },
  ]);
  // Unconfined: `go` lies outside the working tree, where the sandbox's private /tmp cannot see it.
  return startCli(['run', '--yes', '--no-sandbox', '--model', `script:${script}`, 'task A'], { cwd: root });
}

const runIdOf = (stdout: string) => /run (\S+)/.exec(stdout)![1]!;

// A run that writes one file and answers.
function quickRun(root: string, task: string, extra: string[] = []) {
  const script = scriptFile([{ tools: [{ name: 'write_file', input: { path: `${task.replace(/\W/g, '-')}.txt`, content: 'x\n' } }] }, { text: 'ok' }]);
  return runCli(['run', '--yes', ...extra, '--model', `script:${script}`, task], { cwd: root });
}

describe('two runs, one working tree', { concurrency: true }, () => {
  test("B's --restore while A is live is refused, naming A and git worktree add; A's finished edit stays; after A ends B goes on", async () => {
    const repo = await scratch.repo({ 'a.txt': 'original\n', 'README.md': '# p\n' });
    // B first: it records b.txt and its own a.txt, then is killed in a slow model call (unfinished,
    // checkpoint before A's edit). B wrote a.txt: a restore of B's may write it (one of a file B
    // never wrote never would), which is what the check against A's finished edit is for.
    const writesB = [{ name: 'write_file', input: { path: 'b.txt', content: 'by B\n' } }, { name: 'write_file', input: { path: 'a.txt', content: 'by B\n' } }];
    const scriptB = scriptFile([{ tools: writesB }, { text: 'slow', delayMs: 60_000 }, { text: 'B is done.' }]);
    const b = startCli(['run', '--yes', '--model', `script:${scriptB}`, 'task B'], { cwd: repo.root });
    await waitUntil(() => /#3 .*write_file a\.txt/.test(b.stdout), "B's write_file of a.txt", { child: b });
    b.kill();
    await b.result;
    const runB = runIdOf(b.stdout);
    // From now on B's model answers at once (its script is read afresh on resume).
    writeFileSync(scriptB, JSON.stringify({ turns: [{ tools: writesB }, { text: 'B is done.' }] }));

    const go = join(scratch.dir('savepoint-go-'), 'go');
    const a = startA(repo.root, go);
    await waitUntil(() => /run_bash/.test(a.stdout), 'A waiting in run_bash', { child: a });
    assert.equal(repo.read('a.txt'), 'edited by A\n');
    const runA = runIdOf(a.stdout);

    const refused = await runCli(['resume', runB, '--yes', '--restore'], { cwd: repo.root });
    assert.equal(refused.code, 1, `${refused.stdout}\n${refused.stderr}`);
    const message = assertOneParagraph(refused.stderr);
    assert.match(message, new RegExp(`Run ${runA} is live in this working tree .*pid ${a.pid}`));
    assert.match(message, new RegExp(`run ${runB} cannot start here`));
    assert.match(message, /git worktree add/);
    assert.equal(repo.read('a.txt'), 'edited by A\n', "A's finished edit is not undone");
    assert.ok(!/written/.test(refused.stdout), 'no restore happened');

    // A brand-new run is refused too, and leaves nothing in the journal.
    const journalBefore = await gitOut(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal', 'runs/']);
    const fresh = await quickRun(repo.root, 'task C');
    assert.equal(fresh.code, 1);
    assert.match(fresh.stderr, /EWORKTREEBUSY|is live in this working tree/);
    assert.ok(!existsSync(join(repo.root, 'task-C.txt')));
    assert.equal((await gitOut(repo.root, ['ls-tree', '-r', '--name-only', 'agent-journal', 'runs/'])).split('\n').filter((p) => p.includes('task-c')).length, 0, 'no run C in the journal');
    assert.match(journalBefore, /run\.json/);

    writeFileSync(go, '');
    const doneA = await a.result;
    assert.equal(doneA.code, 0, doneA.stderr);

    // A has finished: B's --restore would still put back B's a.txt over the edit A finished, so it
    // is refused, naming the file; nothing is written and B stays unfinished.
    const undo = await runCli(['resume', runB, '--yes', '--restore'], { cwd: repo.root });
    assert.equal(undo.code, 1, `${undo.stdout}\n${undo.stderr}`);
    assert.match(assertOneParagraph(undo.stderr), new RegExp(`Restoring run ${runB}'s checkpoint would undo edits run ${runA} finished after it \\(a\\.txt\\)`));
    assert.equal(repo.read('a.txt'), 'edited by A\n');

    // With --keep-worktree B goes on, over A's a.txt.
    const resumed = await runCli(['resume', runB, '--yes', '--keep-worktree'], { cwd: repo.root });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(repo.read('a.txt'), 'edited by A\n');
  });

  test('in a linked worktree a second run goes live beside the first; a lock left by a killed run is taken over', async () => {
    const repo = await scratch.repo({ 'a.txt': 'original\n' });
    const go = join(scratch.dir('savepoint-go-'), 'go');
    const a = startA(repo.root, go);
    await waitUntil(() => /run_bash/.test(a.stdout), 'A waiting in run_bash', { child: a });
    const linked = join(scratch.dir('savepoint-linked-'), 'wt');
    await gitOut(repo.root, ['worktree', 'add', '-q', '--detach', linked]);
    const beside = await quickRun(linked, 'task in linked worktree');
    assert.equal(beside.code, 0, beside.stderr);
    assert.ok(existsSync(join(linked, 'task-in-linked-worktree.txt')));
    assert.equal(a.child.exitCode, null, 'A is still live');

    a.kill(); // SIGKILL: its worktree lock stays behind, owned by a dead process
    await a.result;
    writeFileSync(go, ''); // its command outlives a kill -9 (as any child does): let it end
    const after = await quickRun(repo.root, 'task after the kill');
    assert.equal(after.code, 0, after.stderr);
  });

  test('a run that finished before this one recorded its checkpoint does not block its --restore', async () => {
    const repo = await scratch.repo({ 'a.txt': 'original\n' });
    const go = join(scratch.dir('savepoint-go-'), 'go');
    writeFileSync(go, '');
    const a = await startA(repo.root, go).result;
    assert.equal(a.code, 0, a.stderr);
    const scriptB = scriptFile([{ tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'by B\n' } }] }, { text: 'slow', delayMs: 60_000 }]);
    const b = startCli(['run', '--yes', '--model', `script:${scriptB}`, 'task B'], { cwd: repo.root });
    await waitUntil(() => /#2 .*write_file b\.txt/.test(b.stdout), "B's write_file", { child: b });
    b.kill();
    await b.result;
    writeFileSync(scriptB, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'b.txt', content: 'by B\n' } }] }, { text: 'B is done.' }] }));
    repo.write('b.txt', 'a hand edit\n');
    const resumed = await runCli(['resume', runIdOf(b.stdout), '--yes', '--restore'], { cwd: repo.root });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(repo.read('b.txt'), 'by B\n', "B's file is restored");
    assert.equal(repo.read('a.txt'), 'edited by A\n', "A's edit, in B's checkpoint too, stays");
  });
});
