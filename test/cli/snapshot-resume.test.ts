// A resume from the run's snapshot (valve/snapshot.ts) through the real CLI against the fake
// Anthropic server: a run with parallel reads, compactions, a change of model and a follow-up,
// killed with SIGKILL right after a snapshot was written, resumes from the snapshot (the steps
// before it are not replayed, not even read) and sends the byte-identical request a full replay
// sends; the same journal with its snapshot removed (as a journal written before snapshots),
// forged (naming another step's entry) or damaged (a field of the wrong type; every other check is
// test/valve/snapshot.test.ts's) replays whole and sends that request too.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCompactionRequest } from '../../src/model/compaction.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { snapshotPath, type RunSnapshot } from '../../src/valve/snapshot.js';
import { useScratch } from '../helpers/scratch.js';
import { startFakeAnthropic, type MessagesBody } from '../helpers/fake-anthropic.js';
import { assertFsckClean, baseEnv, fakeEnv, gitOut, journalPaths, runCli, startCli, waitUntil } from '../helpers/cli.js';

const scratch = useScratch();
const DOCS = 4;
const WINDOW = '8000';

function docs(): Record<string, string> {
  const files: Record<string, string> = { 'README.md': '# snapshots\n' };
  for (let i = 1; i <= DOCS; i++) files[`docs/doc${i}.txt`] = `${`Document ${i}. `.padEnd(40, '.')}\n`.repeat(40);
  return files;
}

// Four reads at once a turn (a batch of steps), `turns` times, then an answer; compactions summarized by the fake.
function reader(turns: number): (body: MessagesBody) => ScriptTurn {
  let asked = 0;
  return (body) => {
    if (isCompactionRequest(body.messages)) return { text: 'unused: the fake answers compactions itself' };
    asked++;
    if (asked > turns) return { text: `Read everything (${asked}).` };
    return { text: `Reading round ${asked}.`, tools: Array.from({ length: DOCS }, (_, i) => ({ name: 'read_file', input: { path: `docs/doc${i + 1}.txt` } })) };
  };
}

// Replaces (or removes, with undefined) the run's snapshot.json in a new journal commit, with git plumbing alone.
function rewriteSnapshot(root: string, run: string, text: string | undefined): void {
  const env = { ...baseEnv(), GIT_INDEX_FILE: join(root, '.git', 'snapshot-test-index') };
  const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: root, env, encoding: 'utf8', input }).trim();
  git(['read-tree', 'agent-journal']);
  if (text === undefined) git(['update-index', '--force-remove', snapshotPath(run)]);
  else git(['update-index', '--add', '--cacheinfo', `100644,${git(['hash-object', '-w', '--stdin'], text)},${snapshotPath(run)}`]);
  const tree = git(['write-tree']);
  const commit = git(['commit-tree', tree, '-p', 'agent-journal', '-m', 'a snapshot rewritten by hand'], '');
  git(['update-ref', 'refs/heads/agent-journal', commit]);
}

// `savepoint resume --json` in `root`: the first request it sends, and what it said of the snapshot and the steps it replayed.
async function resumeIn(root: string, run: string): Promise<{ body: string; fromSnapshot: number | undefined; replayed: number[] }> {
  const fake = await startFakeAnthropic({ turns: () => ({ text: 'Done now.' }) });
  try {
    // git's own trace of the commands savepoint starts: the repository is found once, for the settings and the journal alike.
    const trace = join(scratch.dir('git-trace-'), 'trace');
    const resumed = await runCli(['resume', run, '--yes', '--no-sandbox', '--json'], { cwd: root, env: { ...fakeEnv(fake), GIT_TRACE: trace } });
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    const found = readFileSync(trace, 'utf8').split('\n').filter((line) => / built-in: git rev-parse .*--show-toplevel/.test(line));
    assert.equal(found.length, 1, `the repository is found once:\n${found.join('\n')}`);
    const events = resumed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; fromSnapshot?: number; position?: number });
    const opened = events.find((event) => event.type === 'run-started')!;
    assert.ok(fake.requests.length >= 1, 'the resumed run asked the model');
    return { body: JSON.stringify(fake.requests[0]), fromSnapshot: opened.fromSnapshot, replayed: events.filter((e) => e.type === 'step-replayed').map((e) => e.position!) };
  } finally {
    await fake.close();
  }
}

describe('resume from a snapshot', () => {
  test('killed right after a snapshot, the run resumes from it with the request a full replay sends; a removed, forged or damaged snapshot replays whole', async () => {
    const repo = await scratch.repo(docs());
    const built = await scratch.fake(reader(2), undefined, { contextWindow: 8_000 });
    const first = await runCli(['run', '--yes', '--no-sandbox', '--json', '--context-window', WINDOW, 'read the documents'], { cwd: repo.root, env: fakeEnv(built) });
    assert.equal(first.code, 0, first.stderr + first.stdout);
    const run = (JSON.parse(first.stdout.split('\n')[0]!) as { run: string }).run;

    // The follow-up, on another model, goes on reading (compacting as it goes) until a snapshot
    // lands; the model call after it is held, and the process killed there.
    let held: (() => void) | undefined;
    const holding = new Promise<void>((resolve) => (held = resolve));
    let snapshotSeen = false;
    const live = await scratch.fake(reader(40), undefined, {
      contextWindow: 8_000,
      gate: () => {
        if (!snapshotSeen) snapshotSeen = execFileSync('git', ['ls-tree', '--name-only', 'agent-journal', snapshotPath(run)], { cwd: repo.root, encoding: 'utf8' }).trim() !== '';
        return snapshotSeen ? holding : undefined;
      },
    });
    scratch.defer(() => held!());
    const going = startCli(['continue', '--run', run, '--yes', '--no-sandbox', '--model', 'claude-opus-4-1', 'now read them again'], { cwd: repo.root, env: fakeEnv(live), timeoutMs: 120_000 });
    await waitUntil(() => snapshotSeen, 'a snapshot written, and the next model call held', { child: going, timeoutMs: 120_000 });
    going.kill();
    assert.equal((await going.result).signal, 'SIGKILL');
    await assertFsckClean(repo.root);

    const snapshot = JSON.parse(await gitOut(repo.root, ['show', `agent-journal:${snapshotPath(run)}`])) as RunSnapshot;
    const paths = await journalPaths(repo.root);
    const compactSteps = paths.filter((p) => /-compact\.json$/.test(p)).map((p) => Number(/(\d+)-compact\.json$/.exec(p)![1]));
    const followUp = paths.find((p) => /-user\.json$/.test(p))!;
    const changed = paths.find((p) => /-config\.json$/.test(p))!;
    assert.ok(compactSteps.some((step) => step <= snapshot.step), 'a compaction before the snapshot');
    assert.ok(Number(/(\d+)-user\.json$/.exec(followUp)![1]) < snapshot.step && Number(/(\d+)-config\.json$/.exec(changed)![1]) < snapshot.step, 'the change of model and the follow-up before it');
    assert.equal(snapshot.loop.model, 'claude-opus-4-1');
    assert.equal(snapshot.loop.lastFollowUp?.message, 'now read them again');

    // Copies of the killed run's repository, each resumed on its own.
    const copy = (name: string) => {
      const dir = join(scratch.dir(`savepoint-snapshot-${name}-`), 'repo');
      cpSync(repo.root, dir, { recursive: true });
      return dir;
    };
    const removed = copy('removed');
    rewriteSnapshot(removed, run, undefined);
    const forged = copy('forged');
    const otherEntry = paths.find((p) => p.startsWith(`runs/${run}/steps/`) && p.endsWith('-read_file.json'))!;
    rewriteSnapshot(forged, run, JSON.stringify({ ...snapshot, entry: { ...snapshot.entry, oid: await gitOut(repo.root, ['rev-parse', `agent-journal:${otherEntry}`]) } }));
    const damaged = copy('damaged');
    rewriteSnapshot(damaged, run, JSON.stringify({ ...snapshot, loop: { ...snapshot.loop, turn: 'seven' } }));

    const fromSnapshot = await resumeIn(repo.root, run);
    assert.equal(fromSnapshot.fromSnapshot, snapshot.step, 'resumed from the snapshot');
    assert.ok(fromSnapshot.replayed.length > 0 && fromSnapshot.replayed.every((position) => position > snapshot.step), `only the steps after #${snapshot.step} replayed: ${fromSnapshot.replayed.join(',')}`);
    for (const [name, root] of [['removed', removed], ['forged', forged], ['damaged', damaged]] as const) {
      const whole = await resumeIn(root, run);
      assert.equal(whole.fromSnapshot, undefined, `${name}: replayed whole`);
      assert.equal(whole.replayed[0], 1, `${name}: from step 1`);
      assert.equal(whole.body, fromSnapshot.body, `${name}: the same request, byte for byte`);
    }
  });
});
