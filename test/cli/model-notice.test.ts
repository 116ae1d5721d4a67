// The once-per-run notice about a deprecated model, in savepoint's words: the SDK's date, past or
// to come, and what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelNoticeText } from '../../src/cli/view/model-notice.js';
import { DEFAULT_MODEL } from '../../src/model/defaults.js';
import { noticeFromSdkWarning, withSdkWarnings, type ModelNotice } from '../../src/model/notices.js';

const notice = { notice: 'deprecated', model: 'claude-old', endOfLife: 'November 30th, 2026' } as const;

test('a date to come, a date gone by, and a date the SDK wrote some other way', () => {
  const before = modelNoticeText(notice, Date.parse('2026-11-29T12:00:00'));
  assert.match(before, /^Model claude-old is deprecated: Anthropic retires it on November 30th, 2026, and its requests fail from then on\./);
  assert.match(before, new RegExp(`give it a follow-up with one \\(savepoint continue --model ${DEFAULT_MODEL} `));
  assert.match(modelNoticeText(notice, Date.parse('2026-12-01T12:00:00')), /Anthropic retired it on November 30th, 2026, so its requests may fail\./);
  assert.match(modelNoticeText({ ...notice, endOfLife: 'sometime soon' }), /deprecated: its end of life is sometime soon\./);
  assert.match(modelNoticeText({ notice: 'thinking-deprecated', model: 'claude-x' }), /--thinking .* deprecated for claude-x/);
});

test("the SDK's warnings become notices in its own words and dates, and others are passed on as they were", () => {
  const deprecated = "The model 'claude-old' is deprecated and will reach end-of-life on November 30th, 2026\nPlease migrate to a newer model. Visit https://docs.anthropic.com/en/docs/resources/model-deprecations for more information.";
  assert.deepEqual(noticeFromSdkWarning(deprecated), { notice: 'deprecated', model: 'claude-old', endOfLife: 'November 30th, 2026' });
  assert.deepEqual(noticeFromSdkWarning("Using Claude with claude-opus-4-6 and 'thinking.type=enabled' is deprecated. Use 'thinking.type=adaptive' instead"), { notice: 'thinking-deprecated', model: 'claude-opus-4-6' });
  assert.equal(noticeFromSdkWarning('something else entirely'), undefined);
  const told: ModelNotice[] = [];
  const passedOn: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void passedOn.push(args);
  try {
    const value = withSdkWarnings(() => {
      console.warn(deprecated);
      console.warn('an unknown warning', 2);
      return 42;
    }, (notice) => told.push(notice));
    assert.equal(value, 42);
    console.warn('after');
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(told, [{ notice: 'deprecated', model: 'claude-old', endOfLife: 'November 30th, 2026' }]);
  assert.deepEqual(passedOn, [['an unknown warning', 2], ['after']]);
});

test('a wait for a busy service says how long, until when, and that the same command goes on', () => {
  const text = modelNoticeText({ notice: 'retry-wait', model: 'm', seconds: 42, reason: 'the API answered 429 rate_limit_error', attempt: 1, attempts: 2 }, Date.parse('2026-12-01T10:00:00'));
  assert.match(text, /busy \(the API answered 429 rate_limit_error\): asking again in 42 s, at 10:00:42 \(retry 1 of 2\)/);
  assert.match(text, /the same command goes on later/);
});
