/**
 * A small price table for estimating what model calls cost, in US dollars per million tokens.
 * It is an estimate: list prices as published by Anthropic when this was written, matched on the
 * model name; a scripted model costs nothing; a model it does not know (a local server) is counted
 * at Sonnet rates and marked `assumed`. Cache writes cost 1.25× the input price, cache reads 0.1×.
 */
export interface ModelPrice {
  /** The family the model was matched to, e.g. `claude-sonnet`. */
  family: string;
  inputPerMTok: number;
  outputPerMTok: number;
  /** True when the model was not recognised and the default rates were used. */
  assumed: boolean;
}

const TABLE: Array<{ match: RegExp; family: string; input: number; output: number }> = [
  { match: /opus-4[-.]?[5-9]/, family: 'claude-opus-4.5', input: 5, output: 25 },
  { match: /opus/, family: 'claude-opus', input: 15, output: 75 },
  { match: /sonnet/, family: 'claude-sonnet', input: 3, output: 15 },
  { match: /haiku-4|4[-.]5-haiku/, family: 'claude-haiku-4.5', input: 1, output: 5 },
  { match: /3[-.]5-haiku/, family: 'claude-haiku-3.5', input: 0.8, output: 4 },
  { match: /haiku/, family: 'claude-haiku-3', input: 0.25, output: 1.25 },
];

const DEFAULT = TABLE[2]!;

// The ids a scripted model goes by: the `script:` model option, and the ids its answers report.
const SCRIPTED = /^(script:|scripted(\b|[-_]))/;

/** The price used for `model` (an Anthropic model id, or anything else). */
export function priceFor(model: string | undefined): ModelPrice {
  const name = (model ?? '').toLowerCase();
  // A scripted model (`script:<file>`, reporting "scripted" or "scripted-…") calls no API: it costs nothing.
  if (SCRIPTED.test(name)) return { family: 'scripted', inputPerMTok: 0, outputPerMTok: 0, assumed: false };
  const row = TABLE.find((candidate) => candidate.match.test(name));
  const chosen = row ?? DEFAULT;
  return { family: chosen.family, inputPerMTok: chosen.input, outputPerMTok: chosen.output, assumed: row === undefined };
}

/** The estimated cost in dollars of one call's tokens at `price`. */
export function estimateCost(
  price: ModelPrice,
  usage: { input: number; output: number; cacheCreation: number; cacheRead: number },
): number {
  const perToken = (perMTok: number) => perMTok / 1_000_000;
  return (
    usage.input * perToken(price.inputPerMTok) +
    usage.cacheCreation * perToken(price.inputPerMTok * 1.25) +
    usage.cacheRead * perToken(price.inputPerMTok * 0.1) +
    usage.output * perToken(price.outputPerMTok)
  );
}
