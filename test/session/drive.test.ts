// One run's life (src/session/drive.ts), in this process on a real repository with the scripted
// model, judged by the journal it leaves: a step that changes files is checkpointed after it; a run
// stopped at --max-steps says so in run.json and goes on when resumed; files changed by hand since
// stop the resume before anything is written (nothing ran); a model that fails ends the run as
// failed, with its error; a finished task on a repository that moved on is new work, a new run
// that names the one before; an aborted run ends as interrupted. Through the CLI (its words, a
// terminal, real signals): test/cli/*.test.ts.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DriftError } from '../../src/errors/index.js';
import type { JournalEntry, RunRecord } from '../../src/journal/entry.js';
import { readRunEntries, readRunRecord } from '../../src/journal/reader.js';
import { JournalStore } from '../../src/journal/store.js';
import { createScriptedProvider } from '../../src/model/scripted.js';
import type { ModelProvider } from '../../src/model/types.js';
import { resumeRun, startRun } from '../../src/session/start.js';
import type { SessionEvent, SessionOptions } from '../../src/session/types.js';
import { createTempRepo, type TempRepo } from '../helpers/temp-repo.js';

const TURNS = [
  { text: 'Writing.', tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'noted\n' } }] },
  { text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
  { text: 'Done: notes.txt says noted.' },
];

const repos: TempRepo[] = [];
after(async () => {
  for (const repo of repos) await repo.remove();
});
async function newRepo(): Promise<TempRepo> {
  const repo = await createTempRepo({ files: { 'README.md': '# app\n' }, commit: true });
  repos.push(repo);
  return repo;
}
const options = (repo: TempRepo, provider: ModelProvider = createScriptedProvider({ turns: TURNS }), more: Partial<SessionOptions> = {}): SessionOptions => ({
  dir: repo.root,
  provider,
  sandbox: { use: false },
  approve: async () => true,
  ...more,
});
const journal = async (repo: TempRepo, run: string): Promise<{ record: RunRecord; entries: JournalEntry[] }> => {
  const store = await JournalStore.open(repo.root);
  return { record: (await readRunRecord(store, run))!, entries: await readRunEntries(store, run) };
};
const tip = (repo: TempRepo) => repo.git('rev-parse', 'agent-journal');

describe("a run's life, judged by its journal", () => {
  it('checkpoints the tree after a step that changes files, and ends finished where HEAD was', async () => {
    const repo = await newRepo();
    const outcome = await startRun({ ...options(repo), task: 'take a note' });
    assert.deepEqual([outcome.status, outcome.final], ['finished', 'Done: notes.txt says noted.']);
    const { record, entries } = await journal(repo, outcome.run);
    const write = entries.find((e) => e.kind === 'write_file' && e.phase === 'result')!;
    assert.ok(write.checkpoint, 'the write is checkpointed');
    assert.equal(await repo.git('cat-file', 'blob', `${write.checkpoint}:notes.txt`), 'noted');
    assert.equal(entries.find((e) => e.kind === 'read_file')!.checkpoint, undefined, 'a read changes no file: no checkpoint');
    assert.equal(record.status, 'finished');
    assert.equal(record.attempts.at(-1)!.end?.how, 'finished');
    assert.equal(record.attempts.at(-1)!.end?.head, await repo.git('rev-parse', 'HEAD'));
  });

  it('stops at --max-steps and says so; files changed by hand since stop the resume with nothing written; then it goes on', async () => {
    const repo = await newRepo();
    const stopped = await startRun({ ...options(repo), task: 'take a note', maxSteps: 2 });
    assert.equal(stopped.status, 'max-steps');
    assert.deepEqual(stopped.limit && [stopped.limit.value, stopped.limit.reached], [2, 2]);
    const { record } = await journal(repo, stopped.run);
    assert.equal(record.status, 'running', 'unfinished');
    assert.deepEqual(record.attempts.at(-1)!.end && [record.attempts.at(-1)!.end!.how, record.attempts.at(-1)!.end!.limit], ['limit', 'max-steps']);

    repo.write('notes.txt', 'changed by hand\n');
    const before = await tip(repo);
    await assert.rejects(resumeRun({ ...options(repo), run: stopped.run }), (error: unknown) => error instanceof DriftError && error.data.step === 2);
    assert.equal(await tip(repo), before, 'a drift refusal writes nothing: the run is not called failed');

    const resumed = await resumeRun({ ...options(repo), run: stopped.run, worktree: 'restore' });
    assert.deepEqual([resumed.status, resumed.replayed, resumed.live], ['finished', 2, 3], 'the model call and the write replay; the rest is live');
    assert.equal(repo.read('notes.txt'), 'noted\n', 'restored as the run wrote it');
  });

  it('a model that fails ends the run as failed, with the error in run.json', async () => {
    const repo = await newRepo();
    const scripted = createScriptedProvider({ turns: TURNS });
    let calls = 0;
    const failing: ModelProvider = { ...scripted, complete: (request, more) => (++calls === 2 ? Promise.reject(new Error('the model service fell over')) : scripted.complete(request, more)) };
    await assert.rejects(startRun({ ...options(repo, failing), task: 'take a note' }), /the model service fell over/);
    const store = await JournalStore.open(repo.root);
    const [run] = [...(await store.treeAt('runs'))!.keys()];
    const { record } = await journal(repo, run!);
    assert.equal(record.status, 'failed');
    assert.match(record.error ?? '', /the model service fell over/);
    assert.equal(record.attempts.at(-1)!.end?.how, 'failed');
  });

  it('a finished task on a repository that moved on is new work: a new run that names the one before', async () => {
    const repo = await newRepo();
    const first = await startRun({ ...options(repo), task: 'take a note' });
    const events: SessionEvent[] = [];
    const same = await startRun({ ...options(repo, undefined, { onEvent: (e) => void events.push(e) }), task: 'take a note' });
    assert.deepEqual([same.run, same.live], [first.run, 0], 'as the run left it: replayed');
    await repo.git('add', '-A');
    await repo.git('commit', '-q', '-m', 'the note');
    const renewed = await startRun({ ...options(repo, undefined, { onEvent: (e) => void events.push(e) }), task: 'take a note' });
    assert.notEqual(renewed.run, first.run);
    assert.equal(renewed.status, 'finished');
    assert.deepEqual((await journal(repo, renewed.run)).record.lineage, { previousRun: first.run });
    const told = events.find((e) => e.type === 'new-run-for-task');
    assert.ok(told && told.type === 'new-run-for-task' && told.previous === first.run && told.run === renewed.run);
  });

  it('an aborted run ends as interrupted, and run.json says so', async () => {
    const repo = await newRepo();
    const controller = new AbortController();
    const scripted = createScriptedProvider({ turns: TURNS });
    const aborting: ModelProvider = {
      ...scripted,
      complete: async (request, more) => {
        const answer = await scripted.complete(request, more);
        if (request.messages.length > 1) controller.abort(new Error('stopped by the test'));
        return answer;
      },
    };
    const outcome = await startRun({ ...options(repo, aborting, { signal: controller.signal }), task: 'take a note' }).catch((error: unknown) => error);
    const store = await JournalStore.open(repo.root);
    const [run] = [...(await store.treeAt('runs'))!.keys()];
    const { record } = await journal(repo, run!);
    assert.equal(record.attempts.at(-1)!.end?.how, 'interrupted', `outcome: ${String((outcome as { status?: string })?.status ?? outcome)}`);
    assert.notEqual(record.status, 'finished');
  });
});
