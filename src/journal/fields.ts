// Checks for the fields of journal records read back from the branch. A fetched journal is input,
// not trust: a value that a later command hands to git (an object id), prints (a name) or counts
// with (a step number) is checked for what it must be here, once, before anything uses it. Pure
// code: no fs, no git.

/** A SHA-1 object id as git prints it: 40 lower-case hex digits, so never read as an option. */
export const OBJECT_ID = /^[0-9a-f]{40}$/;

/** The longest text a field of a record may hold where a person reads it (a task, an answer, an error). */
export const MAX_TEXT_CHARS = 1024 * 1024;
/**
 * The largest entry file savepoint reads: a run_bash step keeps up to 256 MB of output as its JSON
 * holds it (tools/run-bash.ts), and the rest of an entry is small, so no entry savepoint writes
 * comes near; one larger is refused from its size alone, before it is read.
 */
export const MAX_ENTRY_BYTES = 320 * 1024 * 1024;
/** The largest run.json savepoint reads: its task, answer and error hold up to 1 MB each, its pinned system prompt and tools a few. */
export const MAX_RUN_RECORD_BYTES = 64 * 1024 * 1024;

/** The longest a name-like field may be (a host, a time, a model id, a path). */
export const MAX_NAME_CHARS = 4096;

/** Reports the first field that is not what it must be, as a reason for CorruptEntryError. */
export type Fail = (reason: string) => never;

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks that `record[key]`, when present, is an object id. */
export function optionalObjectId(record: Record<string, unknown>, key: string, fail: Fail): void {
  const value = record[key];
  if (value !== undefined && (typeof value !== 'string' || !OBJECT_ID.test(value))) fail(`its ${key} is not an object id (40 hex digits)`);
}

/** Checks that `record[key]` is a string of at most `max` characters (or absent, when `optional`). */
export function checkString(
  record: Record<string, unknown>,
  key: string,
  fail: Fail,
  options: { optional?: boolean; max?: number; nullable?: boolean } = {},
): void {
  const value = record[key];
  if (value === undefined && options.optional) return;
  if (value === null && options.nullable) return;
  if (typeof value !== 'string') fail(`its ${key} is ${value === undefined ? 'missing' : 'not a string'}`);
  const max = options.max ?? MAX_NAME_CHARS;
  if ((value as string).length > max) fail(`its ${key} is ${(value as string).length} characters long, more than the ${max} it may hold`);
}

/** Checks that `record[key]` is a whole number from `min` up (or absent, when `optional`). */
export function checkCount(
  record: Record<string, unknown>,
  key: string,
  fail: Fail,
  options: { optional?: boolean; min?: number } = {},
): void {
  const value = record[key];
  if (value === undefined && options.optional) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (options.min ?? 0))
    fail(`its ${key} is not a whole number${options.min ? ` from ${options.min} up` : ''}`);
}

/** Checks that `record[key]`, when present, is a finite number from 0 up (a duration, a cost). */
export function optionalAmount(record: Record<string, unknown>, key: string, fail: Fail): void {
  const value = record[key];
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0))
    fail(`its ${key} is not a number from 0 up`);
}

/** Checks that `record[key]`, when present, is true or false. */
export function optionalFlag(record: Record<string, unknown>, key: string, fail: Fail): void {
  const value = record[key];
  if (value !== undefined && typeof value !== 'boolean') fail(`its ${key} is not true or false`);
}
