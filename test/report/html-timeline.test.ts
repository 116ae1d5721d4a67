// The HTML timeline as a string (the Chromium test in test/cli/reading opens it for real): every
// step is there, everything from the journal is escaped, and nothing is loaded from elsewhere.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENTRY_FORMAT, RUN_FORMAT, type JournalEntry, type RunRecord } from '../../src/journal/entry.js';
import { renderHtmlTimeline } from '../../src/report/html-timeline.js';
import { buildTimeline } from '../../src/report/summarize.js';

const EVIL = '</pre><script>alert("x")</script><img src=x onerror=alert(1)>';

function entry(step: number, kind: string, attempt: number, output: string): JournalEntry {
  return {
    format: ENTRY_FORMAT,
    run: 'r',
    step,
    kind,
    phase: 'result',
    key: `${kind}:${step}`,
    description: `${kind} ${EVIL}`,
    input: { command: EVIL },
    result: { output, isError: false, summary: EVIL },
    summary: EVIL,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    durationMs: 1000 * step,
    attempt,
  };
}

const record: RunRecord = {
  format: RUN_FORMAT,
  id: 'r',
  task: `task ${EVIL}`,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:03.000Z',
  status: 'finished',
  final: EVIL,
  attempts: [
    { number: 1, startedAt: '2026-01-01T00:00:00.000Z', host: 'h', pid: 1, firstLiveStep: 1 },
    { number: 2, startedAt: '2026-01-01T00:00:02.000Z', host: 'h', pid: 2, firstLiveStep: 2 },
  ],
};

describe('renderHtmlTimeline', () => {
  const entries = [entry(1, 'run_bash', 1, EVIL), entry(2, 'run_bash', 2, 'ok')];
  const html = renderHtmlTimeline({
    timeline: buildTimeline('r', record, entries),
    entries,
    diffs: new Map([[2, { fromLabel: EVIL, text: `+${EVIL}\n`, error: null }]]),
    generatedAt: new Date('2026-01-01T00:01:00.000Z'),
  });

  it('escapes everything that came from the journal', () => {
    assert.doesNotMatch(html, /<script>alert/);
    assert.doesNotMatch(html, /<img/);
    assert.doesNotMatch(html, /<\/pre><script/);
    assert.match(html, /&lt;\/pre&gt;&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
  });

  it('has one expandable element per step, a lane per attempt and only inline resources', () => {
    assert.equal(html.match(/<details class="step/g)?.length, 2);
    assert.equal(html.match(/<div class="lane">/g)?.length, 2);
    assert.equal(html.match(/class="seg replayed/g)?.length, 1);
    assert.equal(html.match(/<script>/g)?.length, 1);
    assert.doesNotMatch(html, /<link|https?:\/\//);
  });
});
