// Errors of the tools the model calls, where a person should hear of them.
// Tested in test/session/mentions.test.ts.
import { SavepointError } from './savepoint-error.js';

/** A path given to a tool or command that resolves outside the repository (or into .git). */
export class PathOutsideRepositoryError extends SavepointError<{ path: string; root: string }> {
  constructor(path: string, root: string, why = 'resolves outside the repository') {
    super('EOUTSIDE', `The path "${path}" ${why} (${root}); tools may only touch files inside it, and never .git.`, {
      path,
      root,
    });
  }
}

/** An `@path` mention of a message that names a file no tool may read (outside the repository, in .git, denied by a rule, not text). Nothing was sent. */
export class MentionRefusedError extends SavepointError<{ mention: string; problem: string }> {
  constructor(mention: string, problem: string) {
    super(
      'EMENTION',
      `@${mention} cannot be put in the message: ${problem}. Nothing was sent; reword the message, or leave out the "@" to send the path as plain text.`,
      { mention, problem },
    );
  }
}
