// Errors of the tools the model calls, where a person should hear of them.
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
