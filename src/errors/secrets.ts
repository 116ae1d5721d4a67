// Errors about secrets and the command sandbox.
// Tested in test/redact/secrets.test.ts.
import { SavepointError } from './savepoint-error.js';

/** A step needs the value behind a placeholder, and this machine does not know it. */
export class UnknownSecretError extends SavepointError<{ placeholder: string; variable?: string }> {
  constructor(placeholder: string, variable?: string) {
    const where = variable
      ? `It stands for the value of the environment variable ${variable} on the machine that recorded it, and ${variable} ` +
        `is not set here (or holds no secret-like value). Set ${variable} in this machine's environment`
      : `It stands for a value found by its shape (a key) on the machine that recorded it, and only that machine's ` +
        `.git/savepoint/secrets.json knows it. Copy that file into this repository's .git/savepoint/ (it is private: ` +
        `never commit or push it)`;
    super(
      'EUNKNOWNSECRET',
      `The next step needs the secret ${placeholder}, which the journal keeps only as a placeholder. ${where}, and ` +
        `run the same command again. Nothing was run, and every finished step is kept.`,
      { placeholder, ...(variable ? { variable } : {}) },
    );
  }
}

/** run_bash would run unconfined, and nobody allowed it. `remedy` says how to get a sandbox on this platform (tools/sandbox.ts sandboxRemedy). */
export class SandboxUnavailableError extends SavepointError<{ reason: string }> {
  constructor(reason: string, remedy: string) {
    super(
      'ENOSANDBOX',
      `Commands cannot run in a sandbox here: ${reason}. ${remedy}, or pass --no-sandbox to run them unconfined, with your whole environment and file system. Nothing was run.`,
      { reason },
    );
  }
}
