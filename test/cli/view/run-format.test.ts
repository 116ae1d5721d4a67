// The small pieces of terminal text `runs`, `log` and `show` share: a status coloured by what it asks
// of the person, the note on where a run lives and where it came from, padding that ignores colour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { padVisible, paintStatus, visibleLength, whereNote } from '../../../src/cli/view/run-format.js';
import { styleFor } from '../../../src/cli/terminal/style.js';
import type { RunSummary } from '../../../src/report/summary-types.js';

const colour = styleFor({ isTTY: true, columns: 80 } as never, { FORCE_COLOR: '1' });
const run = (fields: Partial<RunSummary> = {}) => ({ id: 'fix-1a2b', status: 'finished', lineage: null, shownFrom: 'local', sources: ['local'], worktree: null, ...fields }) as RunSummary;

test('finished green, running cyan, interrupted yellow, anything else red', () => {
  assert.equal(paintStatus('finished', colour), '\x1b[32mfinished\x1b[39m');
  assert.equal(paintStatus('running', colour), '\x1b[36mrunning\x1b[39m');
  assert.equal(paintStatus('interrupted', colour), '\x1b[33minterrupted\x1b[39m');
  for (const status of ['failed', 'in-flight', 'diverged', 'corrupt'] as const) assert.equal(paintStatus(status, colour), `\x1b[31m${status}\x1b[39m`);
});

test('where a run lives: its fork, another worktree, a remote it is only in, another machine, the remotes that also hold it', () => {
  assert.equal(whereNote(run()), '');
  assert.equal(whereNote(run({ lineage: { forkedFrom: 'base-9f9f', atStep: 3 } })), 'forked from base-9f9f at #3');
  assert.equal(whereNote(run({ worktree: '/w/other' }), 'other-worktree'), 'in another worktree, /w/other');
  assert.equal(whereNote(run({ shownFrom: 'origin', sources: ['origin'] })), 'fetched from origin, only in origin/agent-journal (savepoint resume fix-1a2b continues it here)');
  assert.equal(whereNote(run({ worktree: '/m/repo', sources: ['local', 'origin'] }), 'elsewhere'), 'from another machine (/m/repo), fetched from origin');
  assert.equal(whereNote(run({ sources: ['local', 'origin', 'backup'] })), 'also in origin/agent-journal, backup/agent-journal');
  assert.equal(whereNote(run({ status: 'diverged', lineage: { forkedFrom: 'b', atStep: 1 } })), 'forked from b at #1 · this machine and a remote each recorded steps the other lacks');
});

test('padding counts the columns a person sees, not colour codes, and wide characters as two', () => {
  assert.equal(visibleLength(paintStatus('finished', colour)), 8);
  assert.equal(visibleLength('日本'), 4);
  assert.equal(padVisible(colour.green('ok'), 5), `${colour.green('ok')}   `);
  assert.equal(padVisible('ok', 5, 'right'), '   ok');
  assert.equal(padVisible('toolong', 3), 'toolong');
});
