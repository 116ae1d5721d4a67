// The once-per-run notice about a deprecated model, in savepoint's words: the SDK's date, past or
// to come, and what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelNoticeText } from '../../src/cli/view/model-notice.js';
import { DEFAULT_MODEL } from '../../src/model/defaults.js';
import { modelNotices } from '../../src/model/notices.js';

const notice = { notice: 'deprecated', model: 'claude-old', endOfLife: 'November 30th, 2026' } as const;

test('a date to come, a date gone by, and a date the SDK wrote some other way', () => {
  const before = modelNoticeText(notice, Date.parse('2026-11-29T12:00:00'));
  assert.match(before, /^Model claude-old is deprecated: Anthropic retires it on November 30th, 2026, and its requests fail from then on\./);
  assert.match(before, new RegExp(`give it a follow-up with one \\(savepoint continue --model ${DEFAULT_MODEL} `));
  assert.match(modelNoticeText(notice, Date.parse('2026-12-01T12:00:00')), /Anthropic retired it on November 30th, 2026, so its requests may fail\./);
  assert.match(modelNoticeText({ ...notice, endOfLife: 'sometime soon' }), /deprecated: its end of life is sometime soon\./);
  assert.match(modelNoticeText({ notice: 'thinking-deprecated', model: 'claude-x' }), /--thinking .* deprecated for claude-x/);
});

test("the SDK's lists are read: a listed model has its date, others none, and thinking only with --thinking", () => {
  assert.deepEqual(modelNotices(DEFAULT_MODEL, true), []);
  assert.deepEqual(modelNotices('toString', false), [], 'not an inherited property of the list');
  assert.match((modelNotices('claude-sonnet-4-5', false)[0] as { endOfLife: string }).endOfLife, /2026/);
  assert.deepEqual(modelNotices('claude-opus-4-6', false), []);
  assert.deepEqual(modelNotices('claude-opus-4-6', true), [{ notice: 'thinking-deprecated', model: 'claude-opus-4-6' }]);
});
