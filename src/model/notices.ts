// What the SDK says about a model as it sends a request: that Anthropic deprecated it (with its
// end-of-life date), or that extended thinking as savepoint asks for it (`thinking.type:
// "enabled"`) is deprecated for it. The SDK prints these with console.warn on every request;
// savepoint takes its words as they are printed and tells the user once per run, in its own words
// (cli/view/model-notice.ts). The SDK's lists are not part of its public API, so its warning is the
// only public source; a warning in words savepoint does not know is passed on unchanged.
// Tested in test/cli/model-notice.test.ts.

/** One thing to tell the user about the model or the service, as it happens. */
export type ModelNotice =
  /** Anthropic deprecated the model: its requests start failing at its end of life (the SDK's words for the date, "November 30th, 2026"). */
  | { notice: 'deprecated'; model: string; endOfLife: string }
  /** Extended thinking with `thinking.type: "enabled"` (`--thinking`) is deprecated for this model. */
  | { notice: 'thinking-deprecated'; model: string }
  /**
   * The model service is busy (a 429 or 529 with its retry-after, or an error event in the middle
   * of an answer): savepoint waits `seconds` and asks again (`attempt` of `attempts`).
   */
  | { notice: 'retry-wait'; model: string; seconds: number; reason: string; attempt: number; attempts: number };

const DEPRECATED = /^The model '([^']+)' is deprecated and will reach end-of-life on (.+?)\n/;
const THINKING = /^Using Claude with (\S+) and 'thinking\.type=enabled' is deprecated\./;

/** The notice an SDK warning stands for, or undefined for words savepoint does not know. */
export function noticeFromSdkWarning(warning: unknown): ModelNotice | undefined {
  if (typeof warning !== 'string') return undefined;
  const deprecated = DEPRECATED.exec(warning);
  if (deprecated) return { notice: 'deprecated', model: deprecated[1]!, endOfLife: deprecated[2]! };
  const thinking = THINKING.exec(warning);
  if (thinking) return { notice: 'thinking-deprecated', model: thinking[1]! };
  return undefined;
}

/**
 * Runs `call` (synchronous: the SDK warns before its first await) with the SDK's console.warn
 * caught: each warning savepoint knows becomes a notice, any other is printed as it was.
 */
export function withSdkWarnings<T>(call: () => T, onNotice: (notice: ModelNotice) => void): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const notice = args.length === 1 ? noticeFromSdkWarning(args[0]) : undefined;
    if (notice) onNotice(notice);
    else warn.apply(console, args);
  };
  try {
    return call();
  } finally {
    console.warn = warn;
  }
}
