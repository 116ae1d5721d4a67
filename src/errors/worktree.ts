// Errors at the edges of the working tree: restoring a checkpoint, sharing a working tree between
// runs, and finding (and writing) the repository the way git does.
// Tested in test/worktree/restore-unsafe.test.ts.
import { SavepointError } from './savepoint-error.js';

// A path from an untrusted tree, shown with control characters escaped so the message stays one line.
const shown = (path: string) => path.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** A checkpoint to restore breaks git's path rules (a `.git` or `..` name, a path beneath a symbolic link, a bad mode): nothing was written. */
export class UnsafeCheckpointError extends SavepointError<{ checkpoint: string; path: string; rule: string; reason: string }> {
  constructor(checkpoint: string, path: string, rule: string, reason: string) {
    super(
      'EUNSAFETREE',
      `The checkpoint ${checkpoint} that savepoint was asked to restore holds "${shown(path)}", which ${reason} ` +
        `(${rule === 'too-large' || rule === 'fsck' ? "savepoint's" : "git's path"} rule "${rule}"), so the whole checkpoint was refused and nothing was written. git ` +
        `itself would never check out such a tree; it can only come from a journal written by hand, ` +
        `for example one fetched from a remote someone rewrote. Inspect it with "git ls-tree -r ${checkpoint}"; ` +
        `to go on without restoring, run the same command with --keep-worktree, or fork the run from an ` +
        `earlier step with "savepoint fork <run> --at <step>".`,
      { checkpoint, path, rule, reason },
    );
  }
}

/** Restoring a checkpoint would overwrite or remove a file git does not track and the run never recorded. */
export class RestoreConflictError extends SavepointError<{ path: string; blocking: string }> {
  constructor(path: string, blocking: string) {
    super(
      'ERESTORECONFLICT',
      `Restoring the checkpoint needs to write "${path}", but "${blocking}" is in the way, and it is a ` +
        `file git does not track and the run never recorded, so removing it would lose it. Nothing was ` +
        `written. Move "${blocking}" somewhere else and run the same command again, or go on with the ` +
        `files as they are with --keep-worktree.`,
      { path, blocking },
    );
  }
}

/** The files a restore would overwrite or remove could not be set aside first, so nothing was restored. */
export class SetAsideError extends SavepointError<{ files: number; reason: string }> {
  constructor(files: number, reason: string) {
    super(
      'ESETASIDE',
      `Before restoring the checkpoint, savepoint saves the ${files} file(s) it would overwrite or remove ` +
        `(under refs/savepoint/saved/), but git could not save them: ${shown(reason.replace(/\s*\n\s*/g, ' '))}. ` +
        `Nothing was written. Fix what git reports, or go on with the files as they are with --keep-worktree.`,
      { files, reason },
    );
  }
}

/** Another live run holds this working tree. */
export class WorktreeBusyError extends SavepointError<{ run: string; holder: string; pid: number; host: string; root: string }> {
  constructor(run: string, holder: string, pid: number, host: string, root: string) {
    super(
      'EWORKTREEBUSY',
      `Run ${holder} is live in this working tree (${root}; pid ${pid} on ${host}), so run ${run} cannot ` +
        `start here: two runs editing the same files would overwrite each other's edits, and a restore ` +
        `by one would undo what the other had finished. Wait for ${holder} to finish, or give ${run} a ` +
        `working tree of its own: "git worktree add ../${run} && cd ../${run}" and run it there (the ` +
        `journal is shared by every worktree of the repository).`,
      { run, holder, pid, host, root },
    );
  }
}

/** GIT_DIR or GIT_WORK_TREE name a repository or working tree other than the ones git finds without them. */
export class GitDirMismatchError extends SavepointError<{ gitDir: string; workTree: string; ownGitDir: string; ownWorkTree: string }> {
  constructor(gitDir: string, workTree: string, ownGitDir: string, ownWorkTree: string) {
    super(
      'EGITDIRMISMATCH',
      `GIT_DIR/GIT_WORK_TREE make git use the repository ${gitDir} with the working tree ${workTree}, ` +
        `but those files belong to the repository ${ownGitDir} (working tree ${ownWorkTree}). ` +
        `Checkpoints of these files would land in a repository that does not hold their history, so ` +
        `savepoint refuses to guess. Unset GIT_DIR and GIT_WORK_TREE, or point both at the same ` +
        `repository and its own working tree.`,
      { gitDir, workTree, ownGitDir, ownWorkTree },
    );
  }
}

/** git itself could not open the repository (and said why). */
export class GitDiscoveryError extends SavepointError<{ dir: string; reason: string }> {
  constructor(dir: string, reason: string) {
    super(
      'EGITDISCOVERY',
      `git could not open the repository at ${dir}: ${reason}. savepoint finds the repository by asking ` +
        `git ("git rev-parse"), so it sees what git sees; fix what git reports (run "git status" there ` +
        `to see it), then run again.`,
      { dir, reason },
    );
  }
}

/** The repository has no working tree (a bare repository, or GIT_DIR without one). */
export class NoWorkTreeError extends SavepointError<{ gitDir: string }> {
  constructor(gitDir: string) {
    super(
      'ENOWORKTREE',
      `The repository ${gitDir} has no working tree (it is a bare repository, or this is inside its ` +
        `git directory), and a savepoint run works on files. Run savepoint in a clone or a worktree ` +
        `of it ("git worktree add <dir>"), or point GIT_WORK_TREE at its files.`,
      { gitDir },
    );
  }
}

/** savepoint cannot write into the repository's git directory (read-only, not permitted, or a file in the way). */
export class RepositoryNotWritableError extends SavepointError<{ path: string; reason: string }> {
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super(
      'EREADONLYREPO',
      `savepoint cannot write ${path} (${reason}). A run keeps its progress in the repository's git ` +
        `directory (the branch agent-journal, and its locks under savepoint/), so it needs to write ` +
        `there. Run it where the repository is writable by you (not a read-only mount or another ` +
        `user's clone); commands that only read the journal, such as "savepoint runs", still work.`,
      { path, reason },
      options,
    );
  }
}

/** The journal branch is checked out in a worktree, so moving it would change that worktree's HEAD behind its back. */
export class JournalCheckedOutError extends SavepointError<{ ref: string; worktree: string }> {
  constructor(ref: string, worktree: string) {
    super(
      'EJOURNALCHECKEDOUT',
      `The branch ${ref.replace(/^refs\/heads\//, '')} is checked out in the worktree ${worktree}, and ` +
        `savepoint refuses to move it, as git refuses to update a branch checked out elsewhere: that ` +
        `worktree's files and index would no longer match its HEAD. Switch that worktree to another ` +
        `branch ("git -C ${worktree} switch -" or "git -C ${worktree} switch --detach"), then run again.`,
      { ref, worktree },
    );
  }
}

/** A restore would put back files that another run changed and finished after this run's last checkpoint. */
export class RestoreWouldUndoError extends SavepointError<{ run: string; other: string; checkpoint: string; paths: string[] }> {
  constructor(run: string, other: string, checkpoint: string, paths: string[]) {
    const listed = paths.slice(0, 8).join(', ') + (paths.length > 8 ? `, and ${paths.length - 8} more` : '');
    super(
      'EUNDOFINISHED',
      `Restoring run ${run}'s checkpoint would undo edits run ${other} finished after it (${listed}): ` +
        `a restore puts back this run's whole recorded tree, and those files are now as ${other} left ` +
        `them. Nothing was written. Go on with the files as they are with --keep-worktree, or take this ` +
        `run's version of a file on purpose ("git restore --source=${checkpoint} -- <file>") and run again.`,
      { run, other, checkpoint, paths },
    );
  }
}

/**
 * The repository's clean or smudge filter (`filter=<driver>` in .gitattributes, its command in the
 * git configuration: git-lfs, say) failed for a file a checkpoint records or a restore writes. A
 * restore has written nothing yet; a checkpoint is not recorded.
 */
export class FilterFailedError extends SavepointError<{ path: string; direction: 'clean' | 'smudge'; detail: string }> {
  constructor(path: string, direction: 'clean' | 'smudge', detail: string, cause?: unknown) {
    const doing =
      direction === 'clean'
        ? "recording it in a checkpoint (git's clean filter, as git add runs it)"
        : "restoring it (git's smudge filter, as git checkout runs it)";
    super(
      'EFILTER',
      `The filter git runs for ${shown(path)} failed while ${doing}: ${shown(detail.slice(0, 300)) || 'no message'}. ` +
        `Check the filter's command (git config --get-regexp '^filter\\.', and .gitattributes): for git-lfs, that git lfs is installed and the file's content can be fetched (git lfs pull). Nothing was written; the same command tries again.`,
      { path, direction, detail },
      { cause },
    );
  }
}
