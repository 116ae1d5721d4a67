// Errors of the journal itself: the repository around it, its locks, its entries, and journals
// from other machines (sync and push).
// Tested in test/git/repository.test.ts, test/journal/moved-branch.test.ts and test/journal/push.test.ts.
import { SavepointError } from './savepoint-error.js';

/** The directory is not inside a git repository. */
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

/** A repository savepoint cannot write safely (SHA-256 objects, reftable refs, ...). */
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

/** Who holds a run lock: its process, host and since when. */
export interface RunLockOwner {
  pid: number;
  host: string;
  since: string;
}

/** Another live process is driving the same run. */
export class RunLockedError extends SavepointError<{ run: string; owner: RunLockOwner; lockPath: string }> {
  constructor(run: string, owner: RunLockOwner, lockPath: string) {
    super(
      'ERUNLOCKED',
      `Run ${run} is already running (pid ${owner.pid} on ${owner.host}, since ${owner.since}). ` +
        `One process at a time may drive a run: wait for it to finish or stop it. A lock held by a stopped ` +
        `process (SIGSTOP, Ctrl-Z) or from another container or machine is taken over once its holder has stopped renewing it for its ` +
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
      `Another savepoint process took this run over while this one was paused or stalled past its lease ` +
        `(run ${run}: ${owner ? `pid ${owner.pid} on ${owner.host}, since ${owner.since}` : "its lock is no longer this process's"}; ${lockPath}). ` +
        `This one stops here without recording or starting anything more, so two processes never drive one run; ` +
        `every step either of them recorded is kept, and the identical command goes on from the journal.`,
      { run, lockPath, ...(owner ? { owner: { pid: owner.pid, host: owner.host, since: owner.since } } : {}) },
    );
  }
}

/** An append would replace a step file another process recorded: the run was taken over while this one was paused. */
export class StepAlreadyRecordedError extends SavepointError<{ path: string; ref: string }> {
  constructor(path: string, ref: string) {
    super(
      'ESTEPTAKEN',
      `Another savepoint process took this run over while this one was paused or slow, and recorded ${path} on ${ref}, ` +
        `so this process stops without writing: replacing a recorded step would change the past of a run that replays from it. ` +
        `Every step either process recorded is kept; run the identical command again to go on from the journal.`,
      { path, ref },
    );
  }
}

/** The journal's ref stayed locked by someone else for longer than any append takes. */
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

/** A journal entry that is not valid JSON or not a valid entry. Never half-replayed. */
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

/**
 * An object is larger than what savepoint reads of that kind (an entry, a checkpoint's file), known
 * from its header before any of it was read. The callers name what it is for; this is their cause.
 */
export class ObjectTooLargeError extends SavepointError<{ oid: string; type: string; size: number; max: number }> {
  constructor(oid: string, type: string, size: number, max: number) {
    super('EOBJECTTOOBIG', `The ${type} ${oid} is ${size} bytes, more than the ${max} savepoint reads for it; it was not read.`, {
      oid,
      type,
      size,
      max,
    });
  }
}

/**
 * An object the journal or a checkpoint names is not in the repository's object store (nor could
 * git fetch it, in a partial clone), or its pack cannot be read: the repository is damaged.
 */
export class MissingObjectError extends SavepointError<{ oid: string; type: string; gitdir: string }> {
  constructor(oid: string, type: string, gitdir: string) {
    super(
      'EOBJECTMISSING',
      `The ${type} ${oid} is not in the repository at ${gitdir}, or its pack cannot be read: the repository ` +
        `is damaged (\`git fsck\` names what is wrong). In a partial clone, git could not fetch it from its remote.`,
      { oid, type, gitdir },
    );
  }
}

/** Both this machine and another appended to the same run since their journals last agreed. */
export class JournalConflictError extends SavepointError<{ run: string; source: string; entries: string[] }> {
  constructor(run: string, source: string, entries: string[]) {
    const shown = entries.slice(0, 8).join(', ') + (entries.length > 8 ? `, and ${entries.length - 8} more` : '');
    super(
      'EJOURNALCONFLICT',
      `The journal of run ${run} has diverged: this machine and ${source} both added entries to it since ` +
        `their journals last agreed (${shown}). savepoint never overwrites a journal, so nothing was changed. ` +
        `Only this run is held back: every other run of ${source}'s journal is folded in and goes on. ` +
        `Compare them with "git log agent-journal...${source === 'local' ? 'agent-journal' : `${source}/agent-journal`} -- runs/${run}"; ` +
        `to keep both, go on from this machine's copy as a new run with "savepoint fork ${run} --at <step>" (the first step ` +
        `that differs keeps both sides' work apart), or start the task anew with "savepoint run --fresh <task>".`,
      { run, source, entries },
    );
  }
}

/**
 * A push that cannot land because the remote's journal holds another run that diverged from this
 * machine's copy: pushing would overwrite that run's entries there. This run's steps are kept locally.
 */
export class RemoteDivergedError extends SavepointError<{ remote: string; run: string; diverged: string[] }> {
  constructor(remote: string, run: string, diverged: string[]) {
    const names = diverged.join(', ');
    super(
      'EREMOTEDIVERGED',
      `The journal cannot be pushed to ${remote}: ${remote}'s journal holds run ${names}, which this machine's journal ` +
        `holds too with other entries (both machines appended to it), and a push would overwrite them there. Run ${run}'s ` +
        `steps are recorded in this machine's agent-journal branch. Settle run ${names} first ("savepoint runs" names it; ` +
        `fork the copy to keep, see docs/machines.md), or go on without pushing (--no-push).`,
      { remote, run, diverged },
    );
  }
}

/** Another machine moved this run on at the remote: this one must stop. */
export class PushRejectedError extends SavepointError<{ run: string; remote: string; entries: string[] }> {
  constructor(run: string, remote: string, entries: string[]) {
    super(
      'EPUSHREJECTED',
      `Pushing the journal to ${remote} was rejected: another machine moved run ${run} on there ` +
        `(${entries.slice(0, 5).join(', ') || 'entries this machine does not have'}). Two machines must not drive one run, ` +
        `so this one stops here. Every entry is kept in this machine's agent-journal branch; to go on from ` +
        `here as a separate run, use "savepoint fork ${run} --at <step>".`,
      { run, remote, entries },
    );
  }
}

/** The push could not be done at all (no such remote, no network, no permission). */
export class PushFailedError extends SavepointError<{ remote: string; output: string }> {
  constructor(remote: string, output: string) {
    super(
      'EPUSHFAILED',
      `Pushing the journal to ${remote} failed: ${output.trim().split('\n').slice(-3).join(' ')}. ` +
        `The step is recorded locally; fix the remote and run the same command again to go on.`,
      { remote, output },
    );
  }
}
