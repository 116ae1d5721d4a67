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
        `One process at a time may drive a run: wait for it to finish or stop it. If that process ` +
        `is gone and its machine cannot be reached, delete ${lockPath}.`,
      { run, owner, lockPath },
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

// A step that was started before a crash and never recorded a result, with the policy set to fail.
export class InFlightError extends SavepointError<{ run: string; position: number; description: string }> {
  constructor(run: string, position: number, description: string) {
    super(
      'EINFLIGHT',
      `Step ${position} of run ${run} (${description}) was started before a crash and its outcome ` +
        `is unknown. It was not re-run. Use "--in-flight rerun" to run it again, or the default ` +
        `"--in-flight report" to tell the model it may or may not have happened.`,
      { run, position, description },
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

export { DiskFullError, asDiskFull, DISK_FULL_CODES } from './disk-full.js';
