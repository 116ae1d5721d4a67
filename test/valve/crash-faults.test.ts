// The crash matrix, deterministic part: a real child process appends steps through
// `openJournal(...).step(...)` and SIGKILLs itself at every fault point of the commit and ref write
// (SAVEPOINT_TEST_CRASH_AT) and just before every file write and fsync of its first appends. After
// every kill (once the child has exited and its output is drained) the git CLI judges: `git fsck
// --strict` is clean, git sees no stray or broken ref, and every step the child reported "done" is
// on the branch. The identical command again resumes (the same run in the test's process: nothing
// kills it): it replays exactly those steps, resolves the one in flight, and goes on live to the
// end, with every append committed exactly once.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { FaultPoint } from '../../src/journal/store.js';
import { journalFile } from '../helpers/git.js';
import { appendsOf, checkAfterKill, checkReport, range, runSubjects } from '../helpers/crash-checks.js';
import { appendInProcess, runAppender, usingBuiltLibrary, type AppenderOptions } from '../helpers/journal-child.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

const FAULT_POINTS: FaultPoint[] = ['before-objects', 'after-objects', 'before-lock', 'locked', 'before-rename', 'before-sync', 'after-rename'];
// A lock left by a killed child is broken after this long (the default, 1 s, is tested elsewhere).
const STALE_MS = 250;

let kills = 0;
const started = Date.now();
const scratch = useScratch();
after(async () => {
  console.log(`# crash matrix (fault points, torn writes): ${kills} SIGKILLs in ${((Date.now() - started) / 1000).toFixed(1)} s (${usingBuiltLibrary ? 'dist' : 'src via tsx'})`);
});

const newRepo = (): Promise<TempRepo> => scratch.repo();

// Two cases at a time, each in its own repository: most of a case is waiting (process start, fsync).
describe('kill -9 at every fault point of the commit and ref write', { concurrency: 2 }, () => {
  // The appender's 8 steps (every 3rd an intent step) make 11 appends: which step and phase each is.
  const APPENDS: Array<{ step: number; phase: 'intent' | 'result' } | 'finish'> = [
    { step: 1, phase: 'result' },
    { step: 2, phase: 'result' },
    { step: 3, phase: 'intent' },
    { step: 3, phase: 'result' },
    { step: 4, phase: 'result' },
    { step: 5, phase: 'result' },
    { step: 6, phase: 'intent' },
    { step: 6, phase: 'result' },
    { step: 7, phase: 'result' },
    { step: 8, phase: 'result' },
    'finish',
  ];
  const STEPS = 8;
  for (const point of FAULT_POINTS) {
    it(`at ${point}, in the first append, an intent, a result after an intent and the finish: nothing is lost and the run resumes`, async () => {
      const repo = await newRepo();
      for (const nth of [1, 4, 7, 11]) {
        const run = `fault-${point}-${nth}`;
        const context = `${point} of append ${nth}`;
        const crashed = await runAppender({ dir: repo.root, run, steps: STEPS, crashAt: `${point}:${nth}` });
        assert.equal(crashed.signal, 'SIGKILL', `the child reached ${context}\n${crashed.stderr}`);
        kills++;

        // Appends before the n-th are on the branch; the n-th only if the ref had already moved.
        const committed = APPENDS.slice(0, point === 'before-sync' || point === 'after-rename' ? nth : nth - 1);
        const hasResult = (step: number) => committed.some((a) => a !== 'finish' && a.step === step && a.phase === 'result');
        const hasIntent = (step: number) => committed.some((a) => a !== 'finish' && a.step === step && a.phase === 'intent');
        const done = new Set(range(1, STEPS).filter((s) => APPENDS.findIndex((a) => a !== 'finish' && a.step === s && a.phase === 'result') < nth - 1));
        assert.deepEqual(crashed.done, [...done], `steps reported done (${context})`);
        checkReport(crashed, new Set(), context);
        await checkAfterKill(repo.root, run, done, context);
        assert.equal((await runSubjects(repo.root, run)).length, committed.length, `commits of ${run} (${context})`);
        const lockLeft = existsSync(join(repo.root, '.git/refs/heads/agent-journal.lock'));
        assert.equal(lockLeft, point === 'locked' || point === 'before-rename', `a ref lock is left exactly when killed holding it (${context})`);

        // The identical command again: replays what is recorded, resolves the step in flight, ends
        // (in this process: nothing kills it).
        const resumed = await appendInProcess({ dir: repo.root, run, steps: STEPS, staleLockMs: STALE_MS });
        checkReport(resumed, done, `resuming after ${context}`);
        assert.equal(resumed.finished, true, `the resumed run finished (${context})\n${resumed.stderr}`);
        assert.deepEqual(resumed.done, range(1, STEPS));
        assert.deepEqual(resumed.replayed, range(1, STEPS).filter(hasResult), `replayed exactly the recorded steps (${context})`);
        assert.deepEqual(
          resumed.inFlight.map((f) => f.position),
          range(1, STEPS).filter((s) => hasIntent(s) && !hasResult(s)),
          `the step with an intent and no result is found in flight (${context})`,
        );
        await checkAfterKill(repo.root, run, new Set(range(1, STEPS)), `after resuming from ${context}`);
        const subjects = await runSubjects(repo.root, run);
        assert.equal(appendsOf(subjects).length, APPENDS.length, `one commit per append, none twice (${context}):\n${subjects.join('\n')}`);
        assert.equal(subjects.at(-1), `${run} finished: ${STEPS} steps`);
        assert.equal(JSON.parse(await journalFile(repo.root, `runs/${run}/run.json`)).status, 'finished');
        assert.equal(existsSync(join(repo.root, '.git/refs/heads/agent-journal.lock')), false);
      }
    });
  }
});

describe('kill -9 in the middle of writing a file', { concurrency: 2 }, () => {
  for (const where of ['fsync', 'write'] as const) {
    it(`before each ${where} of the first appends (a temp file ${where === 'fsync' ? 'written, not synced' : 'created, still empty'}): git stays clean and the run resumes`, async () => {
      const repo = await newRepo();
      const run = `torn-${where}`;
      const durable = new Set<number>();
      const last = where === 'fsync' ? 12 : 6;
      for (let k = 1; k <= last; k++) {
        const options: AppenderOptions = { dir: repo.root, run, steps: 30, staleLockMs: STALE_MS };
        if (where === 'fsync') options.killAtFsync = k;
        else options.killAtWrite = k;
        const report = await runAppender(options);
        const context = `kill before ${where} ${k}`;
        assert.equal(report.signal, 'SIGKILL', `${context}: exit ${report.code}\n${report.lines.join('\n')}\n${report.stderr}`);
        kills++;
        checkReport(report, durable, context);
        for (const step of report.done) durable.add(step);
        await checkAfterKill(repo.root, run, durable, context);
      }
      const final = await appendInProcess({ dir: repo.root, run, steps: 30, staleLockMs: STALE_MS });
      checkReport(final, durable, 'final run');
      assert.equal(final.finished, true, final.stderr);
      await checkAfterKill(repo.root, run, new Set(range(1, 30)), 'after the final run');
      // 30 results, 10 intents, the finish: every append exactly once.
      assert.equal(appendsOf(await runSubjects(repo.root, run)).length, 41);
    });
  }
});

