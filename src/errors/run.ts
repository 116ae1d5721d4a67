// Errors of driving and reading a run: bad usage, missing credentials, a run or step that is not
// there, a working tree that differs from the journal, a step that needs approval with no one to ask.
import { SavepointError } from './savepoint-error.js';

/** One file that differs between two working-tree checkpoints (defined here, where DriftError reports it). */
export interface FileChange {
  path: string;
  change: 'added' | 'deleted' | 'modified';
}

/** `modified src/a.js, added notes.txt, and 3 more` */
export function describeChanges(changes: readonly FileChange[], max = 8): string {
  const shown = changes.slice(0, max).map((c) => `${c.change} ${c.path}`);
  return shown.join(', ') + (changes.length > max ? `, and ${changes.length - max} more` : '');
}

/** Bad command-line usage: exit code 2. */
export class UsageError extends SavepointError<{ hint?: string }> {
  constructor(message: string, hint?: string) {
    super('EUSAGE', message, { hint });
  }
}

/** A live model call is needed and there are no Anthropic credentials. */
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

/** The run asked for is in none of the repository's journals. */
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

/** No unfinished run to resume. */
export class NoUnfinishedRunError extends SavepointError<Record<string, never>> {
  constructor() {
    super(
      'ENORUN',
      `There is no unfinished run in this repository's journals (agent-journal and the fetched refs/remotes/*/agent-journal) to resume. ` +
        `Start one with "savepoint run <task>"; "savepoint runs" lists every run. A run of another machine or an earlier CI job ` +
        `shows up once its remote's journal is fetched: --push <remote> (or the "remote" setting) fetches it first, as does ` +
        `"git fetch origin +agent-journal:refs/remotes/origin/agent-journal" (a single-branch clone's plain "git fetch" does not).`,
      {},
    );
  }
}

/** The repository has no runs at all. */
export class NoRunsError extends SavepointError<{ root: string }> {
  constructor(root: string) {
    super(
      'ENORUNS',
      `There are no runs in ${root} yet: neither agent-journal nor any refs/remotes/*/agent-journal holds one. ` +
        `Start one with "savepoint run <task>", or see one with "savepoint demo"; after "git fetch", runs pushed from another machine are listed too.`,
      { root },
    );
  }
}

/** The run has no step with that number. */
export class NoSuchStepError extends SavepointError<{ run: string; step: number; last: number }> {
  constructor(run: string, step: number, last: number) {
    super(
      'ENOSTEP',
      last === 0
        ? `Run ${run} has no steps recorded yet, so there is no step ${step} to show.`
        : `Run ${run} has no step ${step}: its steps are numbered 1 to ${last}. "savepoint log ${run}" lists them.`,
      { run, step, last },
    );
  }
}

/** The HTML page could not be written where asked. */
export class ReportWriteError extends SavepointError<{ path: string; reason: string }> {
  constructor(path: string, reason: string) {
    super(
      'EREPORTWRITE',
      `Could not write the HTML timeline to ${path}: ${reason}. Choose a path in a folder that exists and that you can write to.`,
      { path, reason },
    );
  }
}

/** A live step needed approval and there was no terminal to ask on. */
export class ApprovalRequiredError extends SavepointError<{ description: string }> {
  constructor(description: string) {
    super(
      'EAPPROVAL',
      `The next step (${description}) needs approval, and there is no terminal to ask on. Re-run the ` +
        `same command with --yes to approve every tool call, or run it in a terminal to answer each one. ` +
        `Nothing was run and every finished step is kept.`,
      { description },
    );
  }
}

/** The working tree differs from the checkpoint and nobody said what to do. */
export class DriftError extends SavepointError<{ run: string; step: number; changes: FileChange[] }> {
  constructor(run: string, step: number, changes: FileChange[]) {
    super(
      'EDRIFT',
      `The working tree differs from what run ${run} recorded ${step ? `after step ${step}` : 'when it started'}: ` +
        `${describeChanges(changes)}. The replayed steps assume the files as the run left them. Run the same ` +
        `command again with --restore to put back the files the run wrote as it recorded them (your versions ` +
        `are saved first under refs/savepoint/saved/; files the run never wrote stay as you have them), or with ` +
        `--keep-worktree to go on with the files as they are (the model is told which files you changed).`,
      { run, step, changes },
    );
  }
}

/** Ctrl-C at a question (an approval or drift prompt): the run stops as Ctrl-C stops it anywhere (exit 130). */
export class InterruptedError extends SavepointError<{ question: string }> {
  constructor(question: string) {
    super(
      'EINTERRUPTED',
      `Stopped at the question (${question}): nothing was run for it, and every finished step is kept. Run the same command again to continue.`,
      { question },
    );
  }
}

/** The signals a person stops a run with: Ctrl-C, a `kill`, the terminal closing. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** How a stop signal reads to a person: `Ctrl-C`, `SIGTERM`, `SIGHUP, the terminal closing`. */
export function stopSignalWords(signal: StopSignal): string {
  return signal === 'SIGINT' ? 'Ctrl-C' : signal === 'SIGHUP' ? 'SIGHUP, the terminal closing' : 'SIGTERM';
}

/**
 * The reason a run's AbortSignal carries when a person stopped it with a signal: a live command
 * reads it to record who stopped it, and how long it had run.
 */
export class StoppedBySignalError extends SavepointError<{ signal: StopSignal }> {
  /** When the signal came (ms since the epoch): what is left of the two seconds to end in is counted from it. */
  readonly at = Date.now();

  constructor(signal: StopSignal) {
    super('ESTOPPED', `Stopped by ${stopSignalWords(signal)}.`, { signal });
  }
}

/** A run id prefix that more than one run starts with. */
export class AmbiguousRunError extends SavepointError<{ prefix: string; matches: string[] }> {
  constructor(prefix: string, matches: string[]) {
    const shown = matches.slice(0, 5).join(', ') + (matches.length > 5 ? `, and ${matches.length - 5} more` : '');
    super(
      'EAMBIGUOUSRUN',
      `"${prefix}" is the start of ${matches.length} run ids (${shown}). Give more of the id; "savepoint runs --all" lists every run.`,
      { prefix, matches },
    );
  }
}

/** The run for this task finished in another worktree or on another branch: replaying it here would show work not done here. */
export class FinishedElsewhereError extends SavepointError<{ run: string; worktree: string | null; branch: string | null }> {
  constructor(run: string, worktree: string | null, branch: string | null) {
    const where = [worktree ? `in ${worktree}` : '', branch ? `on branch ${branch}` : ''].filter(Boolean).join(' ');
    super(
      'EELSEWHERE',
      `Run ${run} for this task finished ${where || 'elsewhere'}, not here: replaying it would show its final answer without doing the work in this working tree. ` +
        `Run the same command with --fresh to start a new run here, or "savepoint resume ${run}" to replay it anyway.`,
      { run, worktree, branch },
    );
  }
}

/** `savepoint diff` of a run that recorded no working tree. */
export class NoCheckpointError extends SavepointError<{ run: string }> {
  constructor(run: string) {
    super(
      'ENOCHECKPOINT',
      `Run ${run} recorded no working tree yet (no checkpoint and no start tree), so there is nothing to compare with its base commit.`,
      { run },
    );
  }
}
