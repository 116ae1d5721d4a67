// A tool call found started but unrecorded after a crash: by default the model is told the truth
// (outcome unknown, not run again, and whether a signal or a crash stopped it); rerun runs it again;
// fail stops the run with EINFLIGHT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IN_FLIGHT_POLICIES, inFlightAnswer } from '../../src/agent/in-flight.js';
import { InFlightError } from '../../src/errors/index.js';
import type { InFlightStep } from '../../src/valve/step-types.js';

const step = (interrupted: boolean): InFlightStep => ({ run: 'fix-1a2b', position: 4, kind: 'run_bash', description: 'run_bash "make deploy"', input: {}, startedAt: '2026-01-01T00:00:00Z', interrupted });

test('report: an error result saying the outcome is unknown and it was not run again, after a crash or a signal', () => {
  const crash = inFlightAnswer('report', step(false));
  assert.ok('result' in crash);
  assert.equal(crash.resolution, 'in-flight-reported');
  assert.equal(crash.summary, 'outcome unknown: started before a crash, not re-run');
  assert.equal(crash.result.isError, true);
  assert.match(crash.result.output, /^This step \(run_bash "make deploy"\) was started at 2026-01-01T00:00:00Z, and the process running it was stopped before its result was recorded\. .*It was not run again\./);
  const signal = inFlightAnswer('report', step(true));
  assert.ok('result' in signal);
  assert.equal(signal.summary, 'outcome unknown: interrupted by a signal, not re-run');
  assert.match(signal.result.output, /stopped by a signal \(Ctrl-C, SIGTERM or SIGHUP\)/);
});

test('rerun runs it again; fail stops the run naming the step', () => {
  assert.deepEqual(inFlightAnswer('rerun', step(false)), { rerun: true });
  assert.throws(() => inFlightAnswer('fail', step(false)), (error: unknown) => error instanceof InFlightError && error.code === 'EINFLIGHT' && error.data.position === 4 && /Step 4 of run fix-1a2b \(run_bash "make deploy"\)/.test(error.message));
  assert.deepEqual(IN_FLIGHT_POLICIES, ['report', 'rerun', 'fail']);
});
