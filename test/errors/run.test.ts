// The words run errors share: changed files listed (the first eight, then how many more), a stop
// signal as a person knows it, usage errors with their hint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeChanges, DriftError, StoppedBySignalError, stopSignalWords, UsageError } from '../../src/errors/run.js';

test('changes read as "change path", the first eight, then how many more', () => {
  const changes = Array.from({ length: 10 }, (_, i) => ({ path: `f${i}.txt`, change: i % 2 ? ('added' as const) : ('modified' as const) }));
  assert.equal(describeChanges(changes.slice(0, 2)), 'modified f0.txt, added f1.txt');
  assert.equal(describeChanges(changes), `${changes.slice(0, 8).map((c) => `${c.change} ${c.path}`).join(', ')}, and 2 more`);
  assert.equal(describeChanges(changes, 1), 'modified f0.txt, and 9 more');
  assert.equal(describeChanges([]), '');
});

test('a stop signal as a person knows it, in the error a stopped command records', () => {
  assert.equal(stopSignalWords('SIGINT'), 'Ctrl-C');
  assert.equal(stopSignalWords('SIGTERM'), 'SIGTERM');
  assert.equal(stopSignalWords('SIGHUP'), 'SIGHUP, the terminal closing');
  const stopped = new StoppedBySignalError('SIGINT');
  assert.deepEqual([stopped.code, stopped.message, stopped.data], ['ESTOPPED', 'Stopped by Ctrl-C.', { signal: 'SIGINT' }]);
});

test('a usage error carries its hint; drift names the files', () => {
  const usage = new UsageError('Bad flag.', 'try --help');
  assert.deepEqual([usage.code, usage.message, usage.data.hint], ['EUSAGE', 'Bad flag.', 'try --help']);
  const drift = new DriftError('fix-1a2b', 4, [{ path: 'a.ts', change: 'modified' }]);
  assert.equal(drift.code, 'EDRIFT');
  assert.match(drift.message, /modified a\.ts/);
});
