// Every error class savepoint raises, one per failure a user can meet, each with a stable `code`.
import { SavepointError } from './savepoint-error.js';

export { SavepointError, isSavepointError } from './savepoint-error.js';

// The directory is not inside a git repository.
export class NotARepositoryError extends SavepointError<{ dir: string }> {
  constructor(dir: string) {
    super(
      'ENOTREPO',
      `${dir} is not inside a git repository. savepoint keeps a run's progress on the git branch ` +
        `"agent-journal" of the repository the agent works in: run it inside one, or create one with ` +
        `"git init" (and a first commit) first.`,
      { dir },
    );
  }
}

// A repository savepoint cannot write safely (SHA-256 objects, reftable refs, ...).
export class UnsupportedRepositoryError extends SavepointError<{ gitdir: string; reason: string }> {
  constructor(gitdir: string, reason: string) {
    super(
      'EUNSUPPORTEDREPO',
      `The repository at ${gitdir} uses ${reason}, which savepoint cannot write safely yet, so it ` +
        `refuses to touch it rather than risk corrupting it. Run savepoint in a repository with ` +
        `SHA-1 objects and files-based refs (the git default).`,
      { gitdir, reason },
    );
  }
}

export interface RunLockOwner {
  pid: number;
  host: string;
  since: string;
}

// Another live process is driving the same run.
export class RunLockedError extends SavepointError<{ run: string; owner: RunLockOwner; lockPath: string }> {
  constructor(run: string, owner: RunLockOwner, lockPath: string) {
    super(
      'ERUNLOCKED',
      `Run ${run} is already running (pid ${owner.pid} on ${owner.host}, since ${owner.since}). ` +
        `One process at a time may drive a run: wait for it to finish or stop it. A lock held from ` +
        `another container or machine is taken over once its holder has stopped renewing it for its ` +
        `lease (30 s by default); a holder that is gone for good can also be cleared by deleting ${lockPath}.`,
      { run, owner, lockPath },
    );
  }
}

/**
 * This process held the run's lock, but stopped renewing it for longer than its lease (its event
 * loop was blocked, or it was suspended), and another process took the run over. Nothing more is
 * appended by this one.
 */
export class RunLockLostError extends SavepointError<{ run: string; lockPath: string; owner?: RunLockOwner }> {
  constructor(run: string, lockPath: string, owner?: RunLockOwner) {
    super(
      'ERUNLOCKLOST',
      `This process lost the lock of run ${run} (${lockPath}): it did not renew its lease in time, and ` +
        `${owner ? `pid ${owner.pid} on ${owner.host} (since ${owner.since})` : 'another process'} took the run over. ` +
        `It stops here without writing, so two processes never drive one run; every step it recorded is kept.`,
      { run, lockPath, ...(owner ? { owner: { pid: owner.pid, host: owner.host, since: owner.since } } : {}) },
    );
  }
}

// The journal's ref stayed locked by someone else for longer than any append takes.
export class JournalBusyError extends SavepointError<{ lockPath: string; waitedMs: number }> {
  constructor(lockPath: string, waitedMs: number) {
    super(
      'EJOURNALBUSY',
      `The journal branch stayed locked for ${Math.round(waitedMs / 1000)} s (${lockPath} exists). ` +
        `Another git command may be updating it; try again, or delete the lock file if no git or ` +
        `savepoint process is running.`,
      { lockPath, waitedMs },
    );
  }
}

/**
 * The journal branch was moved under a live run to a commit that does not contain what this process
 * last read or wrote (reset onto other history, or deleted after its commits were pruned), so
 * appending would leave a run with holes. Nothing was appended.
 */
export class JournalMovedError extends SavepointError<{ ref: string; expected: string; found: string | undefined; missing: boolean }> {
  constructor(ref: string, expected: string, found: string | undefined, missing = false) {
    const branch = ref.replace(/^refs\/heads\//, '');
    super(
      'EJOURNALMOVED',
      `The ${branch} branch was ${found ? `moved to ${found.slice(0, 12)}` : 'deleted'} while this run was live, and ` +
        (missing
          ? `the journal this process had (${expected.slice(0, 12)}) is no longer in the repository (a gc pruned it). `
          : `${found ? 'that commit does not contain' : 'cannot be put back from'} the journal this process last read or wrote (${expected.slice(0, 12)}). `) +
        `Nothing was appended, so no run was left with a hole. "git reflog ${branch}" lists where the branch has been; ` +
        `to go on from this process's journal, run "git update-ref ${ref} ${expected}" and then the same command again.`,
      { ref, expected, found, missing },
    );
  }
}

// A journal entry that is not valid JSON or not a valid entry. Never half-replayed.
export class CorruptEntryError extends SavepointError<{ path: string; step?: number; reason: string }> {
  constructor(path: string, reason: string, step?: number) {
    super(
      'ECORRUPTENTRY',
      `The journal entry ${path}${step === undefined ? '' : ` (step ${step})`} is corrupt: ${reason}. ` +
        `savepoint will not replay a run from a damaged record. Inspect it with ` +
        `"git log -p agent-journal -- ${path}"; to continue from the steps before it, use ` +
        `"savepoint fork <run> --at ${step ?? '<step>'}".`,
      { path, step, reason },
    );
  }
}

export interface StepCall {
  kind: string;
  key: string;
  description: string;
}

// On replay, the loop asked for a different step than the one recorded at that position.
export class DivergenceError extends SavepointError<{ run: string; position: number; recorded: StepCall; requested: StepCall }> {
  constructor(run: string, position: number, recorded: StepCall, requested: StepCall) {
    super(
      'EDIVERGED',
      `Run ${run} diverged from its journal at step ${position}: the journal recorded ` +
        `${recorded.description}, but this time the agent asked for ${requested.description}. ` +
        `Replay must repeat the recorded history exactly (the task, model or code changed?). To keep ` +
        `the steps before it and go on live from there, run "savepoint fork ${run} --at ${position}".`,
      { run, position, recorded, requested },
    );
  }
}

/**
 * A step that was started before a crash and never recorded a result, and nothing said to run it
 * again: the CLI's policy was `fail`, or a library caller gave the step no `onInFlight` answer
 * (`library`). A step recorded with `intent` is never silently repeated.
 */
export class InFlightError extends SavepointError<{ run: string; position: number; description: string; library: boolean }> {
  constructor(run: string, position: number, description: string, library = false) {
    super(
      'EINFLIGHT',
      `Step ${position} of run ${run} (${description}) was started before a crash and its outcome ` +
        `is unknown. It was not re-run. ` +
        (library
          ? `A step recorded with intent (not safe to repeat) is never run twice silently: give step() an ` +
            `onInFlight option that returns { rerun: true } to run it again, or { result, resolution } to ` +
            `record what happened instead.`
          : `Use "--in-flight rerun" to run it again, or the default "--in-flight report" to tell the ` +
            `model it may or may not have happened.`),
      { run, position, description, library },
    );
  }
}

// A path given to a tool or command that resolves outside the repository (or into .git).
export class PathOutsideRepositoryError extends SavepointError<{ path: string; root: string }> {
  constructor(path: string, root: string, why = 'resolves outside the repository') {
    super('EOUTSIDE', `The path "${path}" ${why} (${root}); tools may only touch files inside it, and never .git.`, {
      path,
      root,
    });
  }
}

// Bad command-line usage: exit code 2.
export class UsageError extends SavepointError<{ hint?: string }> {
  constructor(message: string, hint?: string) {
    super('EUSAGE', message, { hint });
  }
}

// A live model call is needed and there are no Anthropic credentials.
export class MissingCredentialsError extends SavepointError<{ model: string }> {
  constructor(model: string) {
    super(
      'ENOCREDENTIALS',
      `This run needs live calls to the model ${model}, and no Anthropic credentials are set. Set ` +
        `ANTHROPIC_API_KEY (a key from https://console.anthropic.com), or ANTHROPIC_AUTH_TOKEN, and ` +
        `ANTHROPIC_BASE_URL for any Anthropic-compatible server (a proxy, a local Ollama). Or use a ` +
        `scripted model with --model script:<file>. To see savepoint work with no key at all, run ` +
        `"savepoint demo".`,
      { model },
    );
  }
}

// The run asked for is in none of the repository's journals.
export class UnknownRunError extends SavepointError<{ run: string; journals: string[] }> {
  constructor(run: string, journals: string[] = []) {
    super(
      'EUNKNOWNRUN',
      `There is no run "${run}" in this repository's journals (${journals.length ? journals.join(', ') : 'agent-journal'}). ` +
        `"savepoint runs" lists every run with its id; runs pushed from another machine show up after "git fetch".`,
      { run, journals },
    );
  }
}
