// The crash matrix, randomised part: a real child process appends steps through
// `openJournal(...).step(...)` and is SIGKILLed by this process at staggered, jittered moments
// (seed in SAVEPOINT_TEST_SEED to repeat a run). After every kill the git CLI judges the branch,
// and the next child must replay every step reported done and go on live from there.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { assertFsckClean, journalFile } from '../helpers/git.js';
import { appendsOf, checkAfterKill, checkReport, runSubjects } from '../helpers/crash-checks.js';
import { startAppender, usingBuiltLibrary } from '../helpers/journal-child.js';
import { useScratch } from '../helpers/scratch.js';
import type { TempRepo } from '../helpers/temp-repo.js';

// A lock left by a killed child is broken after this long (the default, 1 s, is tested elsewhere).
const STALE_MS = 250;

let kills = 0;
const started = Date.now();
const scratch = useScratch();
after(async () => {
  console.log(`# crash matrix (random): ${kills} SIGKILLs in ${((Date.now() - started) / 1000).toFixed(1)} s (${usingBuiltLibrary ? 'dist' : 'src via tsx'})`);
});

const newRepo = (): Promise<TempRepo> => scratch.repo();

describe('kill -9 at randomised, staggered moments', () => {
  it('after each of 36 kills git is clean, every reported step is on the branch, and the next run replays it and goes on', async () => {
    const seed = Number(process.env.SAVEPOINT_TEST_SEED ?? Date.now() % 100_000);
    let state = seed;
    const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const repo = await newRepo();
    const STEPS = 12;
    const KILLS = 36;
    const runs: string[] = [];
    let run = '';
    let durable = new Set<number>();
    let inFlight = 0;
    let readyMs = 300; // how long a child takes to open the journal, as a running average
    for (let i = 0, killed = 0; killed < KILLS || run !== ''; i++) {
      if (run === '') {
        run = `random-${runs.length + 1}`;
        runs.push(run);
        durable = new Set();
      }
      const context = `seed ${seed}, child ${i}, ${run}`;
      const child = startAppender({ dir: repo.root, run, steps: STEPS, workMs: 2, staleLockMs: STALE_MS });
      const spawned = Date.now();
      child.onLine((line) => line.startsWith('ready ') && (readyMs = (readyMs + Date.now() - spawned) / 2));
      if (killed < KILLS) {
        // Staggered by progress, so the kills spread over the run however fast this machine is: 0-30 ms
        // after the child starts its m-th live step (m from 1 to 6). Every 4th kill is timed from the
        // spawn instead, to land during start-up, lock taking and replay.
        if (i % 4 === 3) {
          setTimeout(() => child.kill(), random() * readyMs * 1.3);
        } else {
          const m = 1 + (i % 6);
          const jitter = random() * 30;
          let live = 0;
          child.onLine((line) => line.startsWith('started ') && ++live === m && setTimeout(() => child.kill(), jitter));
        }
      }
      const report = await child.result;
      if (process.env.DEBUG_CRASH) console.log(`# child ${i}: ${report.signal ?? report.code} replayed ${report.replayed.length} started ${report.started.join(",")} done ${report.done.length} ${report.finished ? "finished" : ""}`);
      checkReport(report, durable, context);
      if (report.signal === 'SIGKILL') killed++;
      kills += report.signal === 'SIGKILL' ? 1 : 0;
      inFlight += report.inFlight.length;
      for (const step of report.done) durable.add(step);
      await checkAfterKill(repo.root, run, durable, context);
      if (report.finished) run = '';
    }
    // Every run ended complete: 12 results, 4 intents and the finish, each committed exactly once.
    for (const name of runs) {
      const subjects = await runSubjects(repo.root, name);
      assert.equal(appendsOf(subjects).length, STEPS + STEPS / 3 + 1, `${name}: one commit per append (seed ${seed}):\n${subjects.join('\n')}`);
      assert.equal(JSON.parse(await journalFile(repo.root, `runs/${name}/run.json`)).status, 'finished');
    }
    await assertFsckClean(repo.root);
    console.log(`# random kills: seed ${seed}, ${runs.length} runs, ${inFlight} steps found in flight`);
  });
});
