// One run's life, from opening its journal to its final answer: open the journal with the run's
// configuration, settle the working tree against the last checkpoint, run the agent loop through
// the valve (checkpointing files after each step that may change them), and record how it ended.
// The CLI and the library both come through here; the named entry points are in start.ts.
import { COMPACT_STEP_KIND } from '../agent/compaction.js';
import { runAgent, USER_STEP_KIND, type FollowUp } from '../agent/loop.js';
import { openJournal } from '../valve/open-journal.js';
import type { RunJournal } from '../valve/run-journal.js';
import { DriftError, MissingCredentialsError, StoppedBySignalError, stopSignalWords, RestoreConflictError, RestoreWouldUndoError, UnsafeCheckpointError } from '../errors/index.js';
import { ObjectStore } from '../git/object-store.js';
import { createJournalPusher } from '../journal/push.js';
import { findRepository } from '../git/repository.js';
import { createProvider, hasAnthropicCredentials, SCRIPT_PREFIX } from '../model/index.js';
import type { ModelNotice, ModelProvider } from '../model/index.js';
import { openRunSecrets } from '../redact/run-secrets.js';
import type { RunRecord, RunSandbox } from '../journal/entry.js';
import type { FileChange } from '../errors/index.js';
import { findDrift } from '../worktree/drift.js';
import { createTools } from '../tools/index.js';
import { WorktreeSnapshotter } from '../worktree/snapshot.js';
import { holdWorktree } from '../worktree/worktree-lock.js';
import type { RunOutcome, SessionEvent, SessionOptions } from './types.js';
import { chooseSandbox } from './sandbox.js';
import { probeSandboxAsync } from '../tools/sandbox.js';
import { runConfig } from './config.js';
import { readInstructions } from './instructions.js';
import { settleWorktree } from './worktree.js';

/** The run a session drives, once the entry point has found or named it. */
export interface RunTarget {
  /** The repository root. */
  root: string;
  run: string;
  task: string;
  model: string;
  /** A follow-up instruction to record after the run's recorded ones (`continue`). */
  followUp?: string;
}

/** Drives `target` to its end through the journal. Throws on a divergence, a refused drift or a failure. */
export async function driveSession(target: RunTarget, options: SessionOptions): Promise<RunOutcome> {
  const env = options.env ?? process.env;
  const emit = (event: SessionEvent) => {
    options.onEvent?.(event);
    // A compact step, live or replayed, is also told as a compaction with the conversation's size.
    if ((event.type === 'recorded' || event.type === 'replayed') && event.kind === COMPACT_STEP_KIND) {
      const result = event.result as { tokensBefore?: number; tokensAfter?: number } | undefined;
      options.onEvent?.({ type: 'compaction', position: event.position, replayed: event.type === 'replayed', tokensBefore: result?.tokensBefore ?? null, tokensAfter: result?.tokensAfter ?? null });
    }
  };
  const repo = findRepository(target.root);
  // The sandbox probe runs while the journal opens (chooseSandbox awaits it below).
  if (options.sandbox?.use !== false) void probeSandboxAsync(target.root);
  const { redactor, revealer } = openRunSecrets(repo.commonDir, env);
  let sandbox: RunSandbox = { kind: 'none', network: true, gitWrites: true }; // chosen below, before anything runs live
  const snapshotter = new WorktreeSnapshotter(repo, new ObjectStore(repo.commonDir), { redactText: redactor.text });
  // run_bash asks for the sandbox at each call: it is chosen below, before anything runs live.
  const tools = typeof options.tools === 'function' ? options.tools(target.root) : (options.tools ?? createTools(target.root, { sandbox: () => sandbox }));
  const journal: RunJournal = await openJournal({
    dir: target.root,
    run: target.run,
    task: target.task,
    model: target.model,
    // A new run pins the build's prompt (with the project's instructions), tools and settings; an
    // existing one keeps what it recorded.
    config: (existing) => runConfig(existing, { ...options, model: target.model }, tools, existing ? undefined : readInstructions(target.root, redactor.text)),
    onEvent: emit,
    redact: redactor.value,
    sandbox: () => sandbox,
    startCheckpoint: () => snapshotter.snapshot().tree,
    store: {
      ...(options.push ? { afterAppend: createJournalPusher(() => journal.store, options.push, target.run) } : {}),
      // The branch was deleted or moved back under the run, and put back where this process left it.
      onRestored: ({ restored, found }) => emit({ type: 'journal-restored', restored, ...(found ? { found } : {}) }),
    },
  });
  // One live run per working tree (README: "Two runs, one working tree"); a finished run only replays.
  let worktreeLock: { release(): void } | undefined;
  try {
    if (journal.runRecord?.status !== 'finished' || target.followUp !== undefined) worktreeLock = holdWorktree(repo, target.run);
  } catch (error) {
    journal.close();
    throw error;
  }
  // Until the loop starts, nothing has run: a refusal (no credentials, no sandbox, drift) leaves the run as it was.
  let loopStarted = false;
  try {
    const record = journal.runRecord;
    const followUps = recordedFollowUps(journal);
    const newFollowUp = target.followUp !== undefined && followUps.at(-1)?.message !== target.followUp;
    // Its step is the one after the journal's last: a run stopped short of its answer (a limit, a
    // crash) hears it before its next model call; a finished one right after its final answer.
    if (newFollowUp) followUps.push({ message: target.followUp!, step: journal.history.lastPosition + 1 });
    // A finished run replays with no key; anything else needs one before anything happens.
    const replayOnly = record?.status === 'finished' && !newFollowUp;
    if (!replayOnly && !options.provider && !target.model.startsWith(SCRIPT_PREFIX) && !hasAnthropicCredentials(env)) throw new MissingCredentialsError(target.model);
    const recordedSteps = journal.history.finishedCount;
    const openedAs = newFollowUp ? 'continuing' : replayOnly ? 'finished' : recordedSteps > 0 ? 'resuming' : 'new';
    const givenAt = target.followUp !== undefined && !newFollowUp ? followUps.at(-1)?.step : undefined;
    const interrupted = Boolean(record?.attempts.at(-1)?.interruptedAt);
    const told = journal.config?.instructions;
    emit({ type: 'opened', run: target.run, task: target.task, model: target.model, openedAs, recordedSteps, interrupted, inFlight: journal.history.inFlight, ...(givenAt ? { followUpGivenAt: givenAt } : {}), ...(told && openedAs === 'new' ? { instructions: told.file } : {}) });
    // A finished run replays its answer; the files it answered about may have changed since.
    const changedSince = replayOnly && record ? await finishedRunChanges(record, journal, snapshotter) : undefined;
    if (changedSince) emit({ type: 'finished-over-changes', run: target.run, finishedAt: record!.updatedAt, step: changedSince.step, changes: changedSince.changes });
    if (record && !replayOnly) await settleWorktree({ run: target.run, root: target.root, record, history: journal.history, snapshotter, reveal: revealer.partial, store: journal.store, keepReachable: (tree) => journal.keepReachable(tree), options, emit });
    if (!replayOnly) sandbox = await chooseSandbox(target.root, options.sandbox, options.onSandboxUnavailable);

    loopStarted = true;
    const outcome = await runAgent({
      journal,
      task: target.task,
      config: journal.config!,
      provider: providerFor(target.model, options.provider, (notice) => emit({ type: 'model-notice', ...notice })),
      tools,
      revealSecrets: revealer.value,
      followUps,
      limits: { maxSteps: options.maxSteps, maxTurns: options.maxTurns, maxCost: options.maxCost },
      inFlight: options.inFlight,
      approve: options.approve,
      onText: (text) => emit({ type: 'text', text }),
      onOutput: (chunk) => emit({ type: 'output', chunk }),
      onThinking: (text) => emit({ type: 'thinking', text }),
      signal: options.signal,
      checkpoint: () => {
        const snapshot = snapshotter.snapshot();
        return { tree: snapshot.tree, skipped: snapshot.skipped };
      },
    });
    const counts = journal.stats;
    if (outcome.limit) {
      await journal.markStopped(outcome.limit.limit).catch(() => {}); // only run.json's totals: `runs` then reads no entry
      return { run: target.run, status: outcome.limit.limit, limit: outcome.limit, final: '', steps: outcome.steps, ...counts };
    }
    await journal.finish('finished', { final: outcome.final });
    return { run: target.run, status: 'finished', final: outcome.final, steps: outcome.steps, ...counts, ...(changedSince ? { changedSince: changedSince.changes } : {}) };
  } catch (error) {
    if (options.signal?.aborted) {
      const reason = options.signal.reason;
      await journal.markInterrupted(reason instanceof StoppedBySignalError ? stopSignalWords(reason.data.signal) : 'aborted').catch(() => {});
      return { run: target.run, status: 'interrupted', final: '', steps: journal.history.lastPosition, ...journal.stats };
    }
    // A refusal before the loop starts (no credentials, no sandbox, a drift question unanswered, a
    // checkpoint refused as unsafe or blocked by a file) is not a failure of the run: nothing ran,
    // and the journal must stay exactly as it was (its status and last error too), so `savepoint
    // runs` does not report it failed, the identical command still replays a finished run, and no
    // commit lands for a question.
    const untouched = !loopStarted || [DriftError, UnsafeCheckpointError, RestoreConflictError, RestoreWouldUndoError].some((type) => error instanceof type);
    if (!untouched) await journal.finish('failed', { error: (error as Error).message }).catch(() => {});
    throw error;
  } finally {
    worktreeLock?.release();
    journal.close();
    // The run's packs go into one deltified pack, so that what a run leaves in .git is small
    // (pack-rollup.ts: 0.1-0.3 s of this process at the end of a long run). It starts once the
    // outcome is handed back, so the CLI prints how the run ended first (the process exits when it
    // is done), and it never fails the run; a kill meanwhile loses nothing (the next run's end
    // does it).
    const { rollup } = journal.store.objects;
    setImmediate(() => void rollup.tidy().catch(() => undefined));
  }
}

// How the working tree differs from a finished run's last checkpoint (or its start, when it changed
// no file), or undefined when it does not: the replayed answer is about the files as the run left them.
async function finishedRunChanges(record: RunRecord, journal: RunJournal, snapshotter: WorktreeSnapshotter): Promise<{ step: number; changes: FileChange[] } | undefined> {
  const last = journal.history.lastCheckpoint ?? (record.startCheckpoint ? { tree: record.startCheckpoint, step: 0 } : undefined);
  if (!last) return undefined;
  const drift = await findDrift(snapshotter.objects, snapshotter, last.tree, last.step).catch(() => undefined);
  return drift && drift.changes.length ? { step: drift.step, changes: drift.changes } : undefined;
}

// The follow-up instructions the run has recorded, with the steps that recorded them.
function recordedFollowUps(journal: RunJournal): FollowUp[] {
  return journal.history
    .entries(USER_STEP_KIND)
    .filter((entry) => entry.phase === 'result')
    .map((entry) => ({ message: String((entry.input as { message?: unknown }).message ?? ''), step: entry.step }));
}

// The provider, made once on the first live call; it tells what the SDK says about the model once.
function providerFor(model: string, given: SessionOptions['provider'], onNotice: (notice: ModelNotice) => void): () => Promise<ModelProvider> {
  let provider: Promise<ModelProvider> | undefined;
  return () => (provider ??= Promise.resolve(typeof given === 'function' ? given() : (given ?? createProvider(model, { onNotice }))));
}
