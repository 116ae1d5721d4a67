// What savepoint says, once per run, about a model the SDK lists as deprecated (or whose extended
// thinking, as --thinking asks for it, is): in savepoint's words, with what to do about it. The SDK
// would print its own warning on every request; savepoint never lets it (model/anthropic.ts). And
// each wait before the model service is asked again, with the time it ends.
// Tested in test/cli/model-notice.test.ts.
import { DEFAULT_MODEL } from '../../model/defaults.js';
import type { ModelNotice } from '../../model/index.js';

const DEPRECATIONS_PAGE = 'https://docs.anthropic.com/en/docs/resources/model-deprecations';
const DAY_MS = 24 * 60 * 60 * 1000;

/** The paragraph for a model notice; `now` decides whether an end-of-life date is past. */
export function modelNoticeText(notice: ModelNotice, now: number = Date.now()): string {
  if (notice.notice === 'retry-wait') {
    const at = new Date(now + notice.seconds * 1000).toTimeString().slice(0, 8);
    return (
      `The model service is busy (${notice.reason}): asking again in ${notice.seconds} s, at ${at} (retry ${notice.attempt} of ${notice.attempts}). ` +
      `Ctrl-C stops here; the same command goes on later from the last finished step.`
    );
  }
  if (notice.notice === 'thinking-deprecated') {
    return `Extended thinking as --thinking asks for it (thinking.type "enabled") is deprecated for ${notice.model}: its requests may stop working. A new run without --thinking does without it.`;
  }
  // The SDK writes its dates for people ("November 30th, 2026"); one it writes otherwise is quoted as it is.
  const day = Date.parse(notice.endOfLife.replace(/\b(\d{1,2})(st|nd|rd|th)\b/, '$1'));
  const when = Number.isNaN(day)
    ? `its end of life is ${notice.endOfLife}`
    : now >= day + DAY_MS
      ? `Anthropic retired it on ${notice.endOfLife}, so its requests may fail`
      : `Anthropic retires it on ${notice.endOfLife}, and its requests fail from then on`;
  const model = notice.model === DEFAULT_MODEL ? '<id>' : DEFAULT_MODEL;
  return `Model ${notice.model} is deprecated: ${when}. To move this run on to a newer model, give it a follow-up with one (savepoint continue --model ${model} "…", or /model in a session): the change of model is a step of the run. See ${DEPRECATIONS_PAGE}.`;
}
