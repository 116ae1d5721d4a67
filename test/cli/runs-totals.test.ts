// `savepoint runs` lists a run from the totals its run.json carries and the names of its entry
// files, reading no entry but its follow-ups'; and only while those totals still count the files
// there: a run killed (kill -9) between its first live step and its end, or whose run.json was
// edited, is listed from its entries. Whichever way, the row is the one its entries give.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JournalEntry, RunRecord } from '../../src/journal/entry.js';
import { openJournal } from '../../src/valve/open-journal.js';
import { forkRun } from '../../src/valve/fork.js';
import { listRunStepFiles } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { listAllRuns, loadRun, openJournals } from '../../src/report/journal-runs.js';
import { trustedTotals } from '../../src/report/run-listing.js';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { fakeEnv, gitOut, journalJson, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { rewriteJournalFiles } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const usage = (n: number) => () => ({ inputTokens: 1000 + n, outputTokens: 50 + n, cacheReadInputTokens: n });

interface RunRow {
  id: string;
  status: string;
  steps: number;
  modelCalls: number;
  tokens: { input: number; output: number; cacheCreation: number; cacheRead: number };
  lastActivity: string | null;
  followUps: string[];
}

// What the journal itself says of run `id`, read with git alone: its entry files, and their sums.
async function oracle(root: string, id: string): Promise<{ files: number; steps: number; modelCalls: number; tokens: RunRow['tokens']; lastActivity: string; record: RunRecord }> {
  const names = (await gitOut(root, ['ls-tree', '-r', '--name-only', 'agent-journal', `runs/${id}/steps`])).split('\n').filter(Boolean);
  const entries = await Promise.all(names.map((path) => journalJson<JournalEntry>(root, path)));
  const record = await journalJson<RunRecord>(root, `runs/${id}/run.json`);
  const results = entries.filter((e) => e.phase === 'result');
  const tokens = { input: 0, output: 0, cacheCreation: 0, cacheRead: 0 };
  for (const { usage: u } of results) {
    tokens.input += u?.inputTokens ?? 0;
    tokens.output += u?.outputTokens ?? 0;
    tokens.cacheCreation += u?.cacheCreationInputTokens ?? 0;
    tokens.cacheRead += u?.cacheReadInputTokens ?? 0;
  }
  const times = [record.updatedAt, ...entries.flatMap((e) => [e.startedAt, e.finishedAt ?? e.startedAt])];
  return {
    files: names.length,
    steps: new Set(entries.map((e) => e.step)).size,
    modelCalls: results.filter((e) => e.kind === 'model').length,
    tokens,
    lastActivity: times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)),
    record,
  };
}

async function listJson(root: string, all = false): Promise<RunRow[]> {
  const result = await runCli(['runs', '--json', ...(all ? ['--all'] : [])], { cwd: root });
  assert.equal(result.code, 0, result.stderr);
  return (JSON.parse(result.stdout) as { runs: RunRow[] }).runs;
}

// Each listed row, next to the row the run's entries give (what `savepoint log` reads).
async function listedAndLoaded(root: string) {
  const journals = await openJournals(root);
  const listed = await listAllRuns(journals);
  return Promise.all(listed.map(async (run) => ({ listed: run.summary, loaded: (await loadRun(journals, run.id)).timeline.run })));
}

describe('savepoint runs from run.json totals', () => {
  it('lists finished, failed, interrupted, in-flight, forked and followed-up runs as their entries do, reading no entry but the follow-ups', async () => {
    const repo = await scratch.repo();
    const dir = repo.root;
    const finished = await openJournal({ dir, run: 'finished', task: 'done run', model: 'claude-sonnet-4-5' });
    await finished.step('model', { turn: 1 }, () => ({ text: 'run it' }), { usage: usage(1) });
    await finished.step('run_bash', { command: 'true' }, () => ({ exitCode: 0 }), { intent: true });
    await finished.step('user', { message: 'now add a test' }, () => ({ ok: true }));
    await finished.step('compact', { turn: 2 }, () => ({ summary: 'short' }), { usage: usage(2) });
    await finished.step('model', { turn: 3 }, () => ({ text: 'done' }), { usage: usage(3) });
    await finished.finish('finished', { final: 'done' });
    finished.close();

    const failed = await openJournal({ dir, run: 'failed', task: 'failing run' });
    await failed.step('model', { turn: 1 }, () => ({ text: 'hm' }), { usage: usage(4) });
    await failed.finish('failed', { error: 'the model gave up' });
    failed.close();

    // Stopped by Ctrl-C: once between steps, once with a command in flight (its intent, no result).
    const between = await openJournal({ dir, run: 'ctrl-c', task: 'interrupted run' });
    await between.step('model', { turn: 1 }, () => ({ text: 'a' }), { usage: usage(5) });
    await between.step('read_file', { path: 'a' }, () => 'a');
    await between.record.markInterrupted();
    between.close();
    const inFlight = await openJournal({ dir, run: 'in-flight', task: 'in-flight run' });
    await inFlight.step('model', { turn: 1 }, () => ({ text: 'a' }), { usage: usage(6) });
    await assert.rejects(inFlight.step('run_bash', { command: 'sleep 1' }, () => Promise.reject(new Error('stopped')), { intent: true }));
    await inFlight.record.markInterrupted();
    inFlight.close();

    await forkRun(await JournalStore.open(dir), 'finished', 4, 'forked');

    const pairs = await listedAndLoaded(dir);
    assert.deepEqual(pairs.map((p) => p.listed.id).sort(), ['ctrl-c', 'failed', 'finished', 'forked', 'in-flight']);
    for (const { listed, loaded } of pairs) assert.deepEqual(listed, loaded, `run ${listed.id}`);
    const byId = new Map(pairs.map((p) => [p.listed.id, p.listed]));
    assert.deepEqual(
      [...byId.values()].map((s) => [s.id, s.status, s.steps, s.modelCalls]).sort(),
      [['ctrl-c', 'interrupted', 2, 1], ['failed', 'failed', 1, 1], ['finished', 'finished', 5, 3], ['forked', 'interrupted', 3, 1], ['in-flight', 'in-flight', 2, 1]],
    );
    assert.deepEqual(byId.get('finished')!.followUps, ['now add a test']);
    assert.deepEqual(byId.get('finished')!.tokens, { input: 3006, output: 156, cacheCreation: 0, cacheRead: 6 });

    // Every run's totals count its files, so listing reads run.json and the one user step only.
    const journals = await openJournals(dir);
    const store = journals.refs[0]!.store;
    for (const run of ['finished', 'failed', 'ctrl-c', 'in-flight', 'forked']) {
      const record = JSON.parse((await store.fileAt(`runs/${run}/run.json`))!.toString('utf8')) as RunRecord;
      assert.ok(trustedTotals(record, await listRunStepFiles(store, run)), `the totals of ${run} count its files`);
    }
    const entryBlobs = new Map<string, string>();
    for (const run of ['finished', 'failed', 'ctrl-c', 'in-flight', 'forked']) for (const f of await listRunStepFiles(store, run)) entryBlobs.set(f.oid, f.path);
    const read: string[] = [];
    const objects = store.objects;
    const original = objects.read.bind(objects);
    objects.read = ((oid: string, type?: string) => {
      if (entryBlobs.has(oid)) read.push(entryBlobs.get(oid)!);
      return original(oid, type as never);
    }) as typeof objects.read;
    const listed = await listAllRuns(journals);
    assert.equal(listed.length, 5);
    assert.deepEqual(read.sort(), ['runs/finished/steps/000/000003-user.json', 'runs/forked/steps/000/000003-user.json']);
  });

  it('does not trust totals that no longer count the files (a process that stopped between steps, a hand-edited run.json)', async () => {
    const repo = await scratch.repo();
    const dir = repo.root;
    // One process that wrote three steps and stopped without a word: its run.json counted one.
    const stopped = await openJournal({ dir, run: 'stopped', task: 'stopped run' });
    for (let turn = 1; turn <= 3; turn++) await stopped.step('model', { turn }, () => ({ text: `${turn}` }), { usage: usage(turn) });
    stopped.close();
    const finished = await openJournal({ dir, run: 'finished', task: 'finished run' });
    for (let turn = 1; turn <= 2; turn++) await finished.step('model', { turn }, () => ({ text: `${turn}` }), { usage: usage(turn) });
    await finished.finish('finished', { final: 'ok' });
    finished.close();

    const truth = await oracle(dir, 'stopped');
    assert.equal(truth.record.totals?.files, 1, 'run.json counted the first live step only');
    const [row] = (await listJson(dir)).filter((r) => r.id === 'stopped');
    assert.deepEqual([row!.status, row!.steps, row!.modelCalls, row!.tokens, row!.lastActivity], ['interrupted', 3, 3, truth.tokens, truth.lastActivity]);

    // Totals edited to lie about the count, the last step, the in-flight state, or of another shape: entries are read.
    const record = (await oracle(dir, 'finished')).record;
    const totals = record.totals!;
    for (const edited of [{ ...totals, files: 1 }, { ...totals, lastStep: 5 }, { ...totals, inFlight: true }, { ...totals, modelCalls: 9 }, { ...totals, tokens: null }, 'many']) {
      await rewriteJournalFiles(dir, { 'runs/finished/run.json': `${JSON.stringify({ ...record, totals: edited }, null, 2)}\n` });
      for (const { listed, loaded } of await listedAndLoaded(dir)) assert.deepEqual(listed, loaded, `run ${listed.id} with totals ${JSON.stringify(edited)}`);
    }
    // A run.json without totals (written before they were): the same.
    const { totals: _, ...bare } = record;
    await rewriteJournalFiles(dir, { 'runs/finished/run.json': `${JSON.stringify(bare, null, 2)}\n` });
    const rows = await listedAndLoaded(dir);
    for (const { listed, loaded } of rows) assert.deepEqual(listed, loaded, `run ${listed.id} without totals`);
    assert.equal(rows.find((r) => r.listed.id === 'finished')!.listed.steps, 2);
  });

  it('a run killed with kill -9 mid-way lists the steps, calls and tokens it recorded; once finished, from its totals', async () => {
    const task = 'keep notes';
    const turns: ScriptTurn[] = [
      { text: 'Writing.', tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'alpha\n' } }], usage: { inputTokens: 1500, outputTokens: 30 } },
      { tools: [{ name: 'run_bash', input: { command: 'echo beta >> notes.txt' } }], usage: { inputTokens: 1700, outputTokens: 20, cacheReadInputTokens: 1400 } },
      { text: 'Notes written.', usage: { inputTokens: 1900, outputTokens: 10 } },
    ];
    const hold = new Set([2]); // the third model call hangs until the process is killed
    const fake = await scratch.fake(turns, hold);
    const repo = await scratch.repo();
    const first = startCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 3, 'the third model call', { child: first });
    first.kill();
    assert.equal((await first.result).signal, 'SIGKILL');

    const [id] = (await listJson(repo.root)).map((r) => r.id);
    const killed = await oracle(repo.root, id!);
    assert.ok(killed.record.totals && killed.record.totals.files < killed.files, `run.json's totals lag the journal (${killed.record.totals?.files} of ${killed.files} files)`);
    assert.equal(killed.steps, 4, 'model, write_file, model, run_bash');
    const [row] = await listJson(repo.root);
    assert.deepEqual([row!.status, row!.steps, row!.modelCalls, row!.tokens, row!.lastActivity], ['interrupted', killed.steps, killed.modelCalls, killed.tokens, killed.lastActivity]);
    assert.deepEqual(killed.tokens, { input: 3200, output: 50, cacheCreation: 0, cacheRead: 1400 });
    const table = await runCli(['runs'], { cwd: repo.root });
    assert.match(table.stdout, new RegExp(`${id}\\s+interrupted\\s+4\\s+2\\s+3\\.2k / 50\\s`));

    hold.clear();
    const again = await runCli(['run', '--yes', task], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    const done = await oracle(repo.root, id!);
    assert.equal(done.record.totals?.files, done.files, 'the finished run.json counts every file');
    const [after] = await listJson(repo.root);
    assert.deepEqual([after!.status, after!.steps, after!.modelCalls, after!.tokens, after!.lastActivity], ['finished', done.steps, done.modelCalls, done.tokens, done.lastActivity]);
    assert.deepEqual([done.steps, done.modelCalls], [5, 3]);
    for (const { listed, loaded } of await listedAndLoaded(repo.root)) assert.deepEqual(listed, loaded);
  });

  it('a run stopped at --max-steps lists from the totals its run.json was given then, as its entries do', async () => {
    const turns: ScriptTurn[] = [
      { tools: [{ name: 'read_file', input: { path: 'a.txt' } }], usage: usage(1)() },
      { tools: [{ name: 'read_file', input: { path: 'a.txt' } }], usage: usage(2)() },
      { text: 'Read it twice.', usage: usage(3)() },
    ];
    const fake = await scratch.fake(turns);
    const repo = await scratch.repo({ 'a.txt': 'a\n' });
    const stopped = await runCli(['run', '--yes', '--max-steps', '3', 'read a twice'], { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(stopped.code, 3, stopped.stderr);
    const [id] = (await listJson(repo.root)).map((r) => r.id);
    const truth = await oracle(repo.root, id!);
    assert.equal(truth.record.status, 'running');
    assert.equal(truth.record.totals?.files, truth.files, "run.json's totals count every file of the stopped run");
    const journals = await openJournals(repo.root);
    assert.ok(trustedTotals(truth.record, await listRunStepFiles(journals.refs[0]!.store, id!)), 'trusted: listing reads no entry');
    const [row] = await listJson(repo.root);
    assert.deepEqual([row!.steps, row!.modelCalls, row!.tokens, row!.lastActivity], [truth.steps, truth.modelCalls, truth.tokens, truth.lastActivity]);
    for (const { listed, loaded } of await listedAndLoaded(repo.root)) assert.deepEqual(listed, loaded);
    assert.match(await gitOut(repo.root, ['log', '-1', '--format=%s', 'agent-journal']), /stopped at its max-steps limit in attempt 1$/);
  });
});
