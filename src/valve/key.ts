// A step's deterministic identity. Pure code. The same call, with its input's keys in any order,
// always gets the same key, so a replay can match "this exact step" to "its exact recorded result".
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level and undefined members dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) sorted[key] = sortKeys(member);
  }
  return sorted;
}

/** `run_bash:5d41402abc4b2a76`: the kind, then a digest of the canonical input. */
export function stepKey(kind: string, input: unknown): string {
  return `${kind}:${createHash('sha256').update(canonicalJson(input)).digest('hex').slice(0, 16)}`;
}
