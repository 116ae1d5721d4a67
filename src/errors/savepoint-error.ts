/**
 * The one base class for every error savepoint raises on purpose. Each subclass has a stable `code`
 * that tests and scripts match on, and a `data` payload with the facts the message was built from.
 * The CLI prints `message` as one paragraph and exits 1; a stack trace only with SAVEPOINT_DEBUG=1.
 */
export class SavepointError<Data extends object = Record<string, unknown>> extends Error {
  readonly code: string;
  readonly data: Data;

  constructor(code: string, message: string, data: Data, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }
}

/** True for errors raised on purpose (a clear message for a person), false for bugs. */
export function isSavepointError(error: unknown): error is SavepointError {
  return error instanceof SavepointError;
}
