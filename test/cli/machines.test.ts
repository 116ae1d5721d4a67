// Another machine, end to end: a bare origin and clones of it stand for machines A and B, the real
// CLI runs in each against the fake Anthropic server, and git moves the journal between them the way
// a user would (`git push origin agent-journal`, `git clone`, `git fetch`). B must pick the run up
// where A was killed (A's uncommitted edits restored, finished steps replayed with no model request,
// the test A left failing passing when the run re-runs it); journals that diverged on one run are
// refused with the entries named (they arise only when a machine opts out of the fence a fetched
// run gets, --no-push); appends of different runs merge; `--push` fetches the remote's journal first.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import type { FakeAnthropic } from '../helpers/fake-anthropic.js';
import { useScratch } from '../helpers/scratch.js';
import { assertFsckClean, gitOut, journalFile, journalFiles, runGit } from '../helpers/git.js';
import {
  assertNoStack,
  assertStepModes,
  assistantMessages,
  fakeEnv,
  lastToolResults,
  resultText,
  runCli,
  startCli,
  waitUntil,
} from '../helpers/cli.js';

const scratch = useScratch();
const tempDir = (label: string): string => scratch.dir(`savepoint-${label}-`);

// A bare `origin` holding one commit of `files` on main, and a way to clone it (a "machine").
async function origin(files: Record<string, string>): Promise<{ url: string; clone(name: string): Promise<string> }> {
  const dir = tempDir('machines');
  const url = join(dir, 'origin.git');
  await gitOut(dir, ['init', '-q', '--bare', '-b', 'main', url]);
  const seed = join(dir, 'seed');
  await gitOut(dir, ['clone', '-q', url, seed]);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(seed, path), content);
  await gitOut(seed, ['add', '-A']);
  await gitOut(seed, ['commit', '-q', '-m', 'the project']);
  await gitOut(seed, ['push', '-q', 'origin', 'main']);
  return {
    url,
    clone: async (name) => {
      const root = join(dir, name);
      await gitOut(dir, ['clone', '-q', url, root]);
      return root;
    },
  };
}

const fakeWith = (turns: ScriptTurn[], hold: Set<number>): Promise<FakeAnthropic> => scratch.fake(turns, hold);

const tip = (root: string, ref = 'agent-journal') => gitOut(root, ['rev-parse', '--verify', '-q', ref]);
const isAncestor = async (root: string, a: string, b: string) => (await runGit(root, ['merge-base', '--is-ancestor', a, b])).code === 0;

// The project: `add` is broken and `node check.js` says so.
const PROJECT = {
  'calc.js': 'exports.add = (a, b) => a - b;\n',
  'check.js': "const { add } = require('./calc.js');\nif (add(2, 3) !== 5) { console.log('FAIL: add(2, 3) is ' + add(2, 3)); process.exit(1); }\nconsole.log('ok: add works');\n",
};
const TASK = 'make node check.js pass';
// Turn 2 (the third model call) is where machine A is killed.
const TURNS: ScriptTurn[] = [
  { text: 'Running the check first.', tools: [{ name: 'run_bash', input: { command: 'node check.js' } }] },
  {
    text: 'add subtracts; fixing it and keeping notes.',
    tools: [
      { name: 'edit_file', input: { path: 'calc.js', old_string: 'a - b', new_string: 'a + b' } },
      { name: 'write_file', input: { path: 'NOTES.md', content: 'add() subtracted; fixed.\n' } },
    ],
  },
  { text: 'Checking again.', tools: [{ name: 'run_bash', input: { command: 'node check.js' } }] },
  { text: 'The check passes now.' },
];

// Machine A runs the task until the third model call, is killed there, and pushes its journal;
// then the held call is let go, for whoever resumes.
async function machineA(hold: Set<number>, fake: FakeAnthropic, root: string, extra: string[] = []): Promise<{ run: string }> {
  const a = startCli(['run', '--yes', ...extra, TASK], { cwd: root, env: fakeEnv(fake) });
  await waitUntil(() => fake.requests.length >= 3, 'the third model call on machine A', { child: a });
  a.kill();
  const killed = await a.result;
  assert.equal(killed.signal, 'SIGKILL');
  // Steps: #1 model, #2 run_bash (fails), #3 model, #4 edit_file, #5 write_file.
  assertStepModes(killed.stdout, 0, 'machine A');
  assert.match(killed.stdout, /#2 .*exit 1/);
  // The run's id is derived from the task text.
  const runs = (await journalFiles(root)).filter((p) => p.endsWith('/run.json') && p.startsWith('runs/make-node-check-js-pass-'));
  assert.equal(runs.length, 1, 'one run for the task');
  hold.clear();
  return { run: runs[0]!.split('/')[1]! };
}

// The usual start: a fake holding the third model call, an origin of PROJECT, and machine A cloned
// from it and killed at that call (machineA, with `extra` flags).
async function killedOnA(extra: string[] = []): Promise<{ fake: FakeAnthropic; remote: Awaited<ReturnType<typeof origin>>; rootA: string; run: string }> {
  const hold = new Set([2]);
  const fake = await fakeWith(TURNS, hold);
  const remote = await origin(PROJECT);
  const rootA = await remote.clone('machine-a');
  const { run } = await machineA(hold, fake, rootA, extra);
  return { fake, remote, rootA, run };
}

describe('resuming on another machine', { concurrency: true }, () => {
  test('A is killed after an uncommitted edit and pushes; B clones, resumes, gets the edit back, replays with no model call, and the check passes there; A then finishing the same run on its own diverges, and is stopped with the entries named and nothing changed', async () => {
    const { fake, remote, rootA, run } = await killedOnA();
    // A's edits were never committed: they live only in A's working tree and in the journal.
    assert.match(await gitOut(rootA, ['status', '--porcelain']), /M calc\.js/);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);
    const pushed = await tip(rootA);

    const rootB = await remote.clone('machine-b');
    assert.equal((await runGit(rootB, ['rev-parse', '--verify', '-q', 'refs/heads/agent-journal'])).code, 1, 'B has no local journal yet');
    assert.equal(await tip(rootB, 'refs/remotes/origin/agent-journal'), pushed);
    assert.equal(worktreeFile(rootB, 'calc.js'), PROJECT['calc.js']);

    // A fresh clone lists the fetched run by default, saying where it lives.
    const listed = await runCli(['runs'], { cwd: rootB, env: {} });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${run}\\s+interrupted`));
    assert.match(listed.stdout, new RegExp(`fetched from origin, only in origin/agent-journal \\(savepoint resume ${run} continues it here\\)`));
    const placed = (JSON.parse((await runCli(['runs', '--json'], { cwd: rootB, env: {} })).stdout) as { runs: Array<{ id: string; place: string }> }).runs;
    assert.deepEqual(placed.map((r) => [r.id, r.place]), [[run, 'elsewhere']]);

    const before = fake.requests.length;
    const b = await runCli(['resume', '--yes'], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.match(b.stdout, new RegExp(`run ${run}`));
    assert.match(b.stdout, /clean checkout of the run's base commit: restored/);
    // Finished steps replay (#1-#5); the killed model call (#6) and everything after run live.
    const lines = assertStepModes(b.stdout, 5, 'machine B');
    assert.deepEqual(
      fake.requests.slice(before).map(assistantMessages),
      [2, 3],
      'B asks the model only for the turns A never finished',
    );
    // The check A left failing passes on B, because A's edit came back before the run went live.
    assert.match(lines[6]!.text, /run_bash "node check\.js".*exit 0/);
    const [checked] = lastToolResults(fake.requests.at(-1)!);
    assert.match(resultText(checked!), /^exit 0[\s\S]*ok: add works/);
    assert.match(b.stdout, /The check passes now\./);
    assert.equal(worktreeFile(rootB, 'calc.js'), 'exports.add = (a, b) => a + b;\n');
    assert.equal(worktreeFile(rootB, 'NOTES.md'), 'add() subtracted; fixed.\n');
    assert.match(await gitOut(rootB, ['status', '--porcelain']), /M calc\.js/, 'restored as uncommitted edits, HEAD untouched');
    assert.equal(await tip(rootB, 'HEAD'), await tip(rootA, 'HEAD'));

    // B's journal extends the one A pushed: same history, B's entries on top.
    const extended = await tip(rootB);
    assert.notEqual(extended, pushed);
    assert.ok(await isAncestor(rootB, pushed, extended), "A's pushed journal is an ancestor of B's");
    assert.equal((await journalFile(rootB, `runs/${run}/run.json`)).includes('"status": "finished"'), true);
    await assertFsckClean(rootB);

    // Gone live here, it is this worktree's run now; A lists it as from another machine.
    const after = (JSON.parse((await runCli(['runs', '--json'], { cwd: rootB, env: {} })).stdout) as { runs: Array<{ id: string; place: string }> }).runs;
    assert.deepEqual(after.map((r) => [r.id, r.place]), [[run, 'this-worktree']]);

    // Running it once more on B replays everything: no model call at all.
    const calls = fake.requests.length;
    const replay = await runCli(['run', '--yes', TASK], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(fake.requests.length, calls);
    assertStepModes(replay.stdout, 8, 'a finished run replays');

    // Journals that diverged on the same run are never overwritten: the command stops, names the
    // conflicting entries, and changes nothing. B took the run over and finished it (above).
    // B also starts another run and stops it at a limit: it must not be held back by the divergence.
    const other = join(tempDir('script'), 'other.json');
    writeFileSync(other, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'OTHER.md', content: 'other\n' } }] }, { text: 'Other done.' }, { text: 'More done.' }] }));
    const limited = await runCli(['run', '--yes', '--max-steps', '1', '--run', 'other-run', '--model', `script:${other}`, 'write the other file'], { cwd: rootB, env: {} });
    assert.equal(limited.code, 3, limited.stderr);
    await gitOut(rootB, ['push', '-q', 'origin', 'agent-journal']);
    // Meanwhile A, not knowing, finishes the same run on its own. A pushed the run, so its `resume`
    // would be fenced against origin and stop at its first push (test/cli/fenced-resume.test.ts):
    // only opting out (--no-push) lets the journals diverge.
    const a = await runCli(['resume', '--yes', '--no-push', run], { cwd: rootA, env: fakeEnv(fake) });
    assert.equal(a.code, 0, a.stderr);
    const tipA = await tip(rootA);

    await gitOut(rootA, ['fetch', '-q', 'origin']);
    const requests = fake.requests.length;
    for (const args of [['resume', '--yes', run], ['run', '--yes', TASK]]) {
      const refused = await runCli(args, { cwd: rootA, env: fakeEnv(fake) });
      assert.equal(refused.code, 1, `${args.join(' ')}: ${refused.stdout}\n${refused.stderr}`);
      assert.match(refused.stderr, new RegExp(`savepoint: The journal of run ${run} has diverged`));
      assert.match(refused.stderr, new RegExp(`runs/${run}/steps/000/000006-model\\.json`), 'the first entry both sides wrote is named');
      assert.match(refused.stderr, /savepoint fork/);
      assert.match(refused.stderr, /Only this run is held back/);
      assertNoStack(refused.stderr);
      assert.equal(await journalFile(rootA, `runs/${run}/run.json`), await journalFile(rootA, `runs/${run}/run.json`, tipA), "A's copy of the diverged run is unchanged");
    }
    assert.equal(fake.requests.length, requests, 'no model call');
    assert.notEqual(await tip(rootA, 'origin/agent-journal'), tipA);
    assert.ok(await isAncestor(rootA, tipA, await tip(rootA)), "A's journal only grew");
    assert.ok(!(await isAncestor(rootA, 'origin/agent-journal', await tip(rootA))), "origin's journal is not taken as merged: the divergence is named again next time");

    // Every other run of origin's journal was folded in: listed (the diverged one too, so marked) and resumable.
    const listedOnA = await runCli(['runs', '--json'], { cwd: rootA, env: {} });
    const rows = (JSON.parse(listedOnA.stdout) as { runs: Array<{ id: string; status: string }> }).runs;
    assert.deepEqual(rows.map((r) => [r.id, r.status]).sort(), [[run, 'diverged'], ['other-run', 'interrupted']].sort());
    const resumed = await runCli(['resume', '--yes', '--no-push', 'other-run'], { cwd: rootA, env: {} });
    assert.equal(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`);
    assertStepModes(resumed.stdout, 1, 'the other run, resumed on A');
    assert.match(resumed.stdout, /Other done\./);
    assert.equal(worktreeFile(rootA, 'OTHER.md'), 'other\n');
    // Pushing stays held back while the run is diverged: a push would overwrite it on origin.
    const pushing = await runCli(['continue', '--yes', '--push', 'origin', '--run', 'other-run', 'and once more'], { cwd: rootA, env: {} });
    assert.equal(pushing.code, 1, pushing.stdout);
    assert.match(pushing.stderr.replace(/\s+/g, ' '), new RegExp(`origin's journal holds run ${run}, which this machine's journal holds too`));
    assertNoStack(pushing.stderr);

    // The way on: fork the run from before the divergence (fork works on the local journal).
    const fork = await runCli(['fork', run, '--at', '6', '--run', 'taken-over'], { cwd: rootA, env: {} });
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, /5 finished step\(s\) kept/);
  });

  test('after git fetch, resume finds the run in the remote-tracking journal and fast-forwards the local branch', async () => {
    const hold = new Set([2]);
    const fake = await fakeWith(TURNS, hold);
    const remote = await origin(PROJECT);
    const rootA = await remote.clone('machine-a');
    // B cloned long ago and already has an older journal (an earlier run of its own, pushed).
    const rootB = await remote.clone('machine-b');
    const script = join(tempDir('script'), 'hello.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: 'Hello from an earlier run.' }] }));
    const early = await runCli(['run', '--model', `script:${script}`, 'say hello'], { cwd: rootB, env: {} });
    assert.equal(early.code, 0, early.stderr);
    await gitOut(rootB, ['push', '-q', 'origin', 'agent-journal']);
    await gitOut(rootA, ['fetch', '-q', 'origin']);
    await gitOut(rootA, ['branch', 'agent-journal', 'origin/agent-journal']);

    const { run } = await machineA(hold, fake, rootA);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);
    const pushed = await tip(rootA);

    await gitOut(rootB, ['fetch', '-q', 'origin']);
    const before = fake.requests.length;
    const b = await runCli(['resume', '--yes', run], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assertStepModes(b.stdout, 5, 'machine B after a fetch');
    assert.deepEqual(fake.requests.slice(before).map(assistantMessages), [2, 3]);
    assert.equal(worktreeFile(rootB, 'calc.js'), 'exports.add = (a, b) => a + b;\n');
    // A straight line: B's branch was fast-forwarded to A's, then B appended.
    assert.ok(await isAncestor(rootB, pushed, await tip(rootB)));
    assert.equal((await gitOut(rootB, ['rev-list', '--merges', 'agent-journal'])).trim(), '', 'no merge commit: a fast-forward');
  });

  test('appends of different runs on two machines merge without loss, both ways', async () => {
    const remote = await origin(PROJECT);
    const rootA = await remote.clone('machine-a');
    const rootB = await remote.clone('machine-b');
    const dir = tempDir('scripts');
    const script = (name: string, file: string) => {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: file, content: `${name}\n` } }] }, { text: `${name} done.` }] }));
      return `script:${path}`;
    };
    const alpha = await runCli(['run', '--yes', '--run', 'alpha', '--model', script('alpha', 'alpha.txt'), 'write alpha'], { cwd: rootA, env: {} });
    assert.equal(alpha.code, 0, alpha.stderr);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);
    const beta = await runCli(['run', '--yes', '--run', 'beta', '--model', script('beta', 'beta.txt'), 'write beta'], { cwd: rootB, env: {} });
    assert.equal(beta.code, 0, beta.stderr);
    const betaTip = await tip(rootB);

    // B fetches A's journal; the next command folds it in with a merge commit.
    await gitOut(rootB, ['fetch', '-q', 'origin']);
    const replay = await runCli(['run', '--yes', '--run', 'beta', '--model', script('beta', 'beta.txt'), 'write beta'], { cwd: rootB, env: {} });
    assert.equal(replay.code, 0, replay.stderr);
    const merged = await tip(rootB);
    assert.ok(await isAncestor(rootB, betaTip, merged));
    assert.ok(await isAncestor(rootB, await tip(rootB, 'origin/agent-journal'), merged));
    const filesB = await journalFiles(rootB);
    for (const run of ['alpha', 'beta']) {
      assert.ok(filesB.includes(`runs/${run}/run.json`), `${run} is in B's journal`);
      assert.ok(filesB.some((p) => p.startsWith(`runs/${run}/steps/`)), `${run}'s steps are in B's journal`);
      assert.ok(filesB.some((p) => p.startsWith(`runs/${run}/worktree/`)), `${run}'s checkpoint is in B's journal`);
    }
    // Every entry of both sides survived the merge, byte for byte.
    for (const [root, run] of [[rootA, 'alpha'], [rootB, 'beta']] as const) {
      for (const path of (await journalFiles(root)).filter((p) => p.startsWith(`runs/${run}/`))) {
        assert.equal(await journalFile(rootB, path), await journalFile(root, path), path);
      }
    }
    await assertFsckClean(rootB);

    // B pushes (a fast-forward of origin); A fetches and its branch fast-forwards to the merge.
    await gitOut(rootB, ['push', '-q', 'origin', 'agent-journal']);
    await gitOut(rootA, ['fetch', '-q', 'origin']);
    const again = await runCli(['run', '--yes', '--run', 'alpha', '--model', script('alpha', 'alpha.txt'), 'write alpha'], { cwd: rootA, env: {} });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await tip(rootA), merged, "A's journal is now B's merge: both runs on both machines");
  });
});

describe('--push <remote>', { concurrency: true }, () => {
  test('pushes as it goes, a command only once origin has its start; a machine coming back with --push fetches first and finds the run finished there', async () => {
    const { fake, remote, rootA, run } = await killedOnA(['--push', 'origin']);
    // Pushes run in the background, and A was killed: origin may lag behind A, but it has
    // everything up to the command's intent, which had to land before the command ran.
    const originTip = await tip(remote.url);
    assert.ok(await isAncestor(rootA, originTip, await tip(rootA)), "origin holds a part of A's journal");
    assert.ok((await journalFiles(remote.url, `runs/${run}`)).includes(`runs/${run}/steps/000/000002-run_bash.intent.json`), 'origin saw the command as started before it ran');
    // What was left, pushed as the docs say. A push A had under way when it was killed may still be
    // landing (git outlives a SIGKILL of its parent), and then this one loses the ref lock once.
    for (let tries = 0; ; tries++) {
      const pushed = await runGit(rootA, ['push', '-q', 'origin', 'agent-journal']);
      if (pushed.code === 0) break;
      assert.ok(tries < 300 && /failed to update ref|cannot lock ref/.test(pushed.stderr), pushed.stderr);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await tip(remote.url), await tip(rootA));

    // B resumes from origin and finishes, pushing as it goes.
    const rootB = await remote.clone('machine-b');
    const b = await runCli(['resume', '--yes', run, '--push', 'origin'], { cwd: rootB, env: fakeEnv(fake) });
    assert.equal(b.code, 0, b.stderr);
    const finished = await tip(rootB);
    assert.equal(await tip(remote.url), finished, 'origin has B\'s entries');

    // A comes back and drives the run on with --push origin: it fetches origin's journal first, so it
    // finds the run finished by B and replays it (no model call, nothing appended). A machine that
    // appends while another moves the run on is stopped by its push: test/cli/fenced-resume.test.ts.
    const requests = fake.requests.length;
    const back = await runCli(['resume', '--yes', run, '--push', 'origin'], { cwd: rootA, env: fakeEnv(fake) });
    assert.equal(back.code, 0, `${back.stdout}\n${back.stderr}`);
    assert.match(back.stdout, /finished before: replaying/);
    assert.equal(fake.requests.length, requests, 'no model call: the run is finished');
    assert.equal(await tip(rootA), finished, "A's journal is B's");
    assert.equal(await tip(remote.url), finished, "origin keeps B's journal");
  });

  test('a push that cannot be done at all stops the run with a clear message, the step kept locally', async () => {
    const remote = await origin(PROJECT);
    const root = await remote.clone('machine');
    const script = join(tempDir('script'), 's.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: 'hi' }] }));
    const result = await runCli(['run', '--push', 'nowhere', '--model', `script:${script}`, 'say hi'], { cwd: root, env: {} });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /savepoint: Pushing the journal to nowhere failed: .*The step is recorded locally/);
    assertNoStack(result.stderr);
    assert.ok((await journalFiles(root)).some((p) => p.endsWith('000001-model.json')));
  });

  test('a partial clone (--filter=blob:none) lists and resumes a fetched run: the journal blobs it left out are fetched when first read', async () => {
    const remote = await origin(PROJECT);
    await gitOut(remote.url, ['config', 'uploadpack.allowFilter', 'true']);
    const rootA = await remote.clone('machine-a');
    const script = join(tempDir('script'), 'note.json');
    writeFileSync(script, JSON.stringify({ turns: [{ tools: [{ name: 'write_file', input: { path: 'note.txt', content: 'from A\n' } }] }, { text: 'Wrote the note.' }] }));
    const a = await runCli(['run', '--yes', '--model', `script:${script}`, 'write the note'], { cwd: rootA, env: {} });
    assert.equal(a.code, 0, a.stderr);
    await gitOut(rootA, ['push', '-q', 'origin', 'agent-journal']);

    const rootB = join(tempDir('partial'), 'machine-b');
    await gitOut(tempDir('cwd'), ['clone', '-q', '--filter=blob:none', `file://${remote.url}`, rootB]);
    await gitOut(rootB, ['fetch', '-q', 'origin']);
    const runs = await runCli(['runs', '--all'], { cwd: rootB, env: {} });
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, /write the note/);
    const [run] = (await gitOut(rootB, ['ls-tree', '--name-only', 'origin/agent-journal', 'runs/'])).trim().split('\n');
    const b = await runCli(['resume', '--yes', run!.replace(/^runs\//, '')], { cwd: rootB, env: {} });
    assert.equal(b.code, 0, `${b.stdout}\n${b.stderr}`);
    assert.doesNotMatch(b.stderr, /unexpected error|Could not find/);
    assertStepModes(b.stdout, 3, 'machine B, a partial clone');
    assert.match(b.stdout, /Wrote the note/);
    // The step's entry and its checkpoint tree, read whole: the edit A made, as a diff.
    const shown = await runCli(['show', run!.replace(/^runs\//, ''), '2'], { cwd: rootB, env: {} });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /\+from A/);
  });
});

function worktreeFile(root: string, path: string): string {
  return readFileSync(join(root, path), 'utf8');
}
