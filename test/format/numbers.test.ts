// Counts, durations, money, sizes and times as savepoint prints them in the terminal and the report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compactCount, formatBytes, formatCount, formatDuration, formatUsd, plural } from '../../src/format/numbers.js';
import { relativeTime, shortTime } from '../../src/format/time.js';

describe('numbers', () => {
  it('writes counts, plurals and compact counts', () => {
    assert.equal(formatCount(12345), '12,345');
    assert.equal(plural(1, 'line'), '1 line');
    assert.equal(plural(2000, 'line'), '2,000 lines');
    assert.equal(plural(2, 'match', 'matches'), '2 matches');
    assert.deepEqual([812, 9300, 12_400, 1_200_000].map(compactCount), ['812', '9.3k', '12k', '1.2M']);
  });

  it("groups a count's digits as en-US's own formatter does, whole or not, without building one for whole numbers", () => {
    const intl = new Intl.NumberFormat('en-US');
    const counts = [0, -0, 1, 12, 123, 999, 1000, 1234, 99_999, 100_000, 123_456, 1_234_567, -1, -1000, -123_456_789, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    const others = [1.5, 1234.5678, -0.25, 2 ** 60, 1e21, NaN, Infinity, -Infinity];
    for (const n of [...counts, ...others]) assert.equal(formatCount(n), intl.format(n), String(n));
  });

  it('writes durations, dollars and bytes', () => {
    assert.deepEqual([12.4, 1400, 125_000].map(formatDuration), ['12 ms', '1.4 s', '2 min 5 s']);
    assert.deepEqual([0, 0.004, 0.031, 1.2].map(formatUsd), ['$0', '<$0.01', '~$0.03', '~$1.20']);
    assert.deepEqual([1, 512, 12_595, 4_300_000].map(formatBytes), ['1 byte', '512 bytes', '12.3 KB', '4.1 MB']);
  });
});

describe('times', () => {
  const T0 = Date.parse('2026-01-01T10:00:00.000Z');
  const at = (s: number) => new Date(T0 + s * 1000).toISOString();

  it('says how long ago in words people use', () => {
    const now = T0 + 3 * 60_000 + 5000;
    assert.equal(relativeTime(at(0), now), '3 min ago');
    assert.equal(relativeTime(at(184), now), 'just now');
    assert.equal(relativeTime(at(160), now), '25 s ago');
    assert.equal(relativeTime(at(0), T0 + 86_400_000), '1 day ago');
    assert.equal(relativeTime(at(0), T0 + 2 * 86_400_000), '2 days ago');
    assert.equal(relativeTime(at(0), T0 + 90 * 86_400_000), '2026-01-01');
    assert.equal(relativeTime(null, now), '—');
    assert.equal(relativeTime('not a time', now), '—');
  });

  it('shortens an ISO time to seconds', () => {
    assert.equal(shortTime('2026-01-01T10:00:00.123Z'), '2026-01-01 10:00:00');
  });
});
