// A run on the terminal, shared by `run`, `resume` and `continue`: the session does the work; this
// file turns its events into lines (the header, REPLAYED / LIVE step lines, streamed text, what
// happened to the working tree), asks the questions a person answers (approval, drift), turns
// Ctrl-C into an abort, and prints how the run ended. It returns the process exit code.
// Tested in test/cli/run-screen.test.ts, test/cli/interrupt.test.ts.
import { relative } from 'node:path';
import type { Writable } from 'node:stream';
import type { LimitReached } from '../../agent/budget.js';
import { describeChanges, StoppedBySignalError, stopSignalWords, UsageError, type StopSignal } from '../../errors/index.js';
import { showControls, wrapWords } from '../../format/text.js';
import { relativeTime, shortTime } from '../../format/time.js';
import type { RunOutcome, SessionEvent, SessionHold, SessionOptions } from '../../session/index.js';
import { askAboutDrift, askToRunUnconfined, createApprover, where } from './approval.js';
import { dropTypedAhead } from '../terminal/typed-ahead.js';
import { JsonLines } from './json-lines.js';
import { LiveView } from './live-view.js';
import { modelNoticeText } from './model-notice.js';
import { pushEventText } from './push-events.js';
import { RunTally } from './run-tally.js';
import { sandboxLine } from './sandbox-line.js';
import type { DriveFlags } from './drive-flags.js';
import { StepPrinter } from './step-printer.js';
import { headerLines } from './run-header.js';
import { sessionSettings, type SessionSettings } from './session-settings.js';
import type { Repository } from '../../git/repository.js';
import { askTrustOrStop, leftOutLine, trustQuestionsFor, type TrustDeclined } from './trust-question.js';
import { styleFor, type Style } from '../terminal/style.js';
import { subagentLine } from './subagent-line.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

/** How an interactive session wants a turn shown (the commands leave these unset). */
export interface TurnView {
  /** Replayed steps are counted on one line instead of one line each, and the header is one line. */
  quietReplay?: boolean;
  /** Ctrl-C goes back to the prompt: the ending says so instead of "run the same command again". */
  inSession?: boolean;
  /** The turn gives the model no message (/model, /compact): the run's earlier answer is shown only if a model turn went live. */
  noAnswer?: boolean;
  /** Every session event, after it is printed (the session learns the run's id from `opened`). */
  onEvent?: (event: SessionEvent) => void;
  /** The run's totals when the turn ends (/cost shows them). */
  onTally?: (tally: RunTally) => void;
  /** Header lines said earlier in this session (how commands run): said again only when they change. */
  said?: Set<string>;
  /** The allow rules `a` remembered earlier in this session ("session only"): every turn keeps them. */
  remembered?: string[];
  /** Before a question (an approval, drift, no sandbox) reads the terminal: the session keeps what was typed ahead of it as messages (by default it is dropped, so only keys typed after the question answer it). */
  beforeQuestion?: () => Promise<void>;
  /** The trust the person declined earlier in this session (folder and server digests): not asked again at every turn. */
  declinedTrust?: TrustDeclined;
  /** The session's last tally of its run: a turn on the run it held open (nothing replayed) adds to it (RunTally.carry). */
  carried?: () => RunTally | undefined;
  /** The session's hold on its run (SessionOptions.hold): the run stays open between its messages. */
  hold?: SessionHold;
  /** The message goes as typed, never as a custom command (typed with `//` in a session); `@` mentions still bring their files. */
  noCommands?: boolean;
  /** The repository the session found at its start (its folder stays the same): each turn reads the settings files again, but does not ask git where the repository is. */
  repository?: Repository;
}

/**
 * The settings for a command that drives a run, with the folder's trust settled first: on a
 * terminal, the trust question (and each unapproved MCP server's) before anything runs; then the
 * one line that says what the repository's files hold that was left out (once per session). A
 * number is the exit code of Ctrl-C at the question.
 */
export async function settleTrust(
  flags: DriveFlags,
  view: TurnView,
  interactive: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SessionSettings | number> {
  let settings = sessionSettings(flags, process.cwd(), env, view.remembered, view.repository);
  if (interactive && settings.root) {
    const asked = trustQuestionsFor(settings.settings, view.declinedTrust);
    if (asked.folder || asked.servers.length) {
      const answer = await askTrustOrStop(settings.settings, settings.root, {
        out: process.stderr,
        style: styleFor(process.stderr, env),
        beforeQuestion: view.beforeQuestion ?? dropTypedAhead,
        ...(view.declinedTrust ? { declined: view.declinedTrust } : {}),
        env,
      });
      if ('exitCode' in answer) return answer.exitCode;
      if (answer.recorded) settings = sessionSettings(flags, process.cwd(), env, view.remembered, settings.repository);
    }
  }
  const line = leftOutLine(settings.settings, settings.root);
  if (line && !view.said?.has(line)) process.stderr.write(`${line}\n`);
  if (line) view.said?.add(line);
  return settings;
}

/** Runs `drive` (a session entry point) with the terminal's printer, prompts and Ctrl-C; returns the exit code. */
export async function runOnTerminal(
  drive: (options: SessionOptions) => Promise<RunOutcome>,
  flags: DriveFlags,
  out: Out = process.stdout,
  view: TurnView = {},
): Promise<number> {
  if (flags.restore && flags.keepWorktree) throw new UsageError('Choose one of --restore and --keep-worktree, not both.');
  const env = process.env;
  const interactive = Boolean(process.stdin.isTTY);
  // Before anything else: a settings file that cannot be used stops the command here; then the
  // folder's trust, asked on a terminal before anything runs, or said in one line of what was left out.
  const trusted = await settleTrust(flags, view, interactive);
  if (typeof trusted === 'number') return trusted;
  const settings = trusted;
  const json = flags.json ? new JsonLines(out) : undefined;
  // With --json, stdout is the event stream: everything for people goes to stderr.
  const screen: Out = json ? process.stderr : out;
  const style = styleFor(screen, env);
  const live = new LiveView(screen, style, Boolean(screen.isTTY) && !json);
  // Model text streams in as it comes on a terminal (or where FORCE_COLOR says one renders the
  // output); in a pipe each turn's text is one line.
  const printer = new StepPrinter(live.out, style, { stream: (Boolean(screen.isTTY) || style.color) && !json });
  const tally = new RunTally();
  const controller = new AbortController();
  // What was going on when a signal came, so the last words say only what happened.
  const doing: Doing = { step: undefined, asking: false };
  let stopped: Stopped | undefined;
  const stopWith = (signal: StopSignal) => {
    if (controller.signal.aborted) process.exit(130); // a second signal: the command's group was stopped at the first
    stopped = { signal, step: doing.step, asking: doing.asking, recorded: undefined };
    live.end();
    live.out.write(style.red(`\n  Stopping on ${stopSignalWords(signal)}: every finished step is kept.\n`));
    controller.abort(new StoppedBySignalError(signal));
    // savepoint ends within two seconds of the signal, whatever the step in progress does; a
    // record cut short then is what a crash leaves, and the next run handles it as one.
    // In a session, Ctrl-C goes back to the prompt instead.
    // On a loaded machine the last words may not be out by then: said from what is known, first.
    if (!view.inSession || signal !== 'SIGINT') setTimeout(() => endAtDeadline(), STOP_GRACE_MS).unref();
  };
  let lastWordsSaid = false;
  const endAtDeadline = () => {
    if (!lastWordsSaid && !view.inSession) {
      live.end();
      say(live.out, (text) => text, stoppedText(stopped, { deadline: true }), style.width);
    }
    process.exit(130);
  };
  const onSigint = () => stopWith('SIGINT');
  const onSigterm = () => stopWith('SIGTERM');
  const onSighup = () => stopWith('SIGHUP');
  const stop = onSigint; // Ctrl-C at a question
  const beforeQuestion = view.beforeQuestion ?? dropTypedAhead; // before every question: approval, drift, no sandbox
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  process.on('SIGHUP', onSighup);
  const asking = (on: boolean, what?: string) => {
    doing.asking = on ? (what ?? true) : false;
    return on ? live.pause() : live.resume();
  };
  // A UserPromptSubmit hook blocked a message of this command: the run has no answer to print for it.
  let blockedPrompt = false;
  // Quiet replay: the replayed steps as one line, said before the first thing that is not one.
  let replayedQuietly = 0;
  const sayReplayed = () => {
    if (replayedQuietly)
      live.out.write(style.dim(`  ${replayedQuietly} earlier step${replayedQuietly === 1 ? '' : 's'} replayed from the journal\n`));
    replayedQuietly = 0;
  };
  try {
    const outcome = await drive({
      model: flags.model,
      defaultModel: settings.defaultModel,
      // Every MCP server in force, the repository's trusted and approved ones among them: the
      // session never reads .mcp.json on its own (trustRepository is the library's switch).
      ...(settings.mcpServers ? { mcpServers: settings.mcpServers.servers, mcpServersSource: settings.mcpServers.source } : {}),
      // The hooks in force: the person's own, and the repository's once it is trusted (sandboxed).
      ...(settings.settings.hooks.length ? { hooks: settings.settings.hooks } : {}),
      maxSteps: flags.maxSteps,
      maxTurns: flags.maxTurns,
      maxCost: flags.maxCost,
      maxTokens: flags.maxTokens,
      maxRetryWait: flags.maxRetryWait,
      // commander's --no-compact leaves `compact` true when it is not given: only false is a choice.
      ...(flags.compact === false ? { compact: false } : {}),
      compactAt: flags.compactAt,
      contextWindow: flags.contextWindow,
      thinking: flags.thinking,
      inFlight: flags.inFlight,
      worktree: flags.restore ? 'restore' : flags.keepWorktree ? 'keep' : undefined,
      // --push <remote> or --no-push, else the `remote` setting: fetched first, pushed as the run goes.
      push: flags.push ?? settings.remote,
      pushTimeout: flags.pushTimeout,
      pushRetry: flags.pushRetry,
      sandbox: { use: flags.sandbox !== false, network: settings.network, gitWrites: settings.gitWrites },
      onSandboxUnavailable: interactive
        ? (reason, remedy) => askToRunUnconfined(reason, remedy, live.out, style, stop, beforeQuestion)
        : undefined,
      env,
      // Found once for the settings: the journal is opened on it, not found again.
      ...(settings.repository ? { repository: settings.repository } : {}),
      // A session's background commands run on between its messages; it stops them when it ends.
      ...(view.inSession ? { keepBackgroundCommands: true } : {}),
      signal: controller.signal,
      ...(view.hold ? { hold: view.hold } : {}),
      approve: createApprover({
        yes: Boolean(flags.yes),
        mode: settings.mode,
        rules: settings.rules,
        remembered: view.remembered,
        root: settings.root,
        interactive,
        style: styleFor(process.stderr, env),
        onAsk: asking,
        onInterrupt: stop,
        beforeAsk: beforeQuestion,
      }),
      permission: (tool, input) => settings.rules.decide(tool, input),
      // What the person typed becomes what the model is sent: custom commands, @-mentions.
      expand: { commands: view.noCommands ? [] : settings.commands, mentions: true },
      onDrift: interactive ? (question) => askAboutDrift(question, live, style, stop, beforeQuestion) : undefined,
      onEvent: (event) => {
        // What .mcp.json names that did not start is said in the left-out line, before the run.
        if (event.type === 'repository-left-out') return;
        if (event.type === 'opened' && event.held) {
          const carried = view.carried?.();
          if (carried?.run === event.run) tally.carry(carried);
        }
        tally.add(event);
        if (event.type === 'hook' && event.event === 'UserPromptSubmit') blockedPrompt = true;
        if (event.type === 'started') doing.step = { position: event.position, kind: event.kind, description: event.description };
        else if (event.type === 'recorded') {
          if (stopped?.step?.position === event.position) stopped.recorded = event.summary;
          doing.step = undefined;
        }
        view.onEvent?.(event);
        if (json) return json.event(event);
        if (view.quietReplay && event.type === 'opened')
          return void live.out.write(style.dim(`run ${event.run}  ·  model ${showControls(event.model)}\n`));
        if (view.quietReplay && event.type === 'replayed') return void replayedQuietly++;
        if (view.quietReplay && event.type !== 'output') sayReplayed();
        if (event.type === 'started') live.begin(event.description, event.kind);
        else if (event.type === 'output') return live.output(event.chunk);
        else if (event.type === 'recorded' || event.type === 'in-flight') live.end();
        // Said once in a session, as how commands run is: each turn is fenced alike.
        if (event.type === 'fenced' && view.said) {
          if (view.said.has(`fenced ${event.remote}`)) return;
          view.said.add(`fenced ${event.remote}`);
        }
        if (event.type === 'sandbox') {
          const line = sandboxLine(event);
          if (!view.said?.has(line)) say(live.out, style.dim, line, style.width);
          return void view.said?.add(line);
        }
        printEvent(event, printer, live.out, style);
        if (event.type === 'model-notice' && event.notice === 'retry-wait') live.countdown(event.seconds);
      },
    });
    live.close();
    lastWordsSaid = true; // the run's end is said below, a stop's included
    sayReplayed();
    view.onTally?.(tally);
    if (json) json.end(outcome, tally);
    const o = live.out;
    const saved = view.quietReplay || !tally.savedLine() ? '' : wrapWords(tally.savedLine(), style.width, 'columns').join('\n');
    const totals = wrapWords(tally.line(), style.width, 'columns')
      .map((line) => style.dim(line))
      .join('\n');
    if (outcome.status === 'interrupted') {
      if (view.inSession) {
        o.write('Stopped. Every finished step is kept; the next message goes on from here.\n');
        return 130;
      }
      say(o, (text) => text, stoppedText(stopped), style.width);
      o.write(`${totals}\n`);
      return 130;
    }
    if (outcome.limit) {
      o.write(`\n${style.yellow(limitMessage(outcome.limit))}\n`);
      if (saved) o.write(`${saved}\n`);
      o.write(`${totals}\n`);
      if (outcome.pushFailure) throw outcome.pushFailure; // the journal is whole here, not on the remote
      return LIMIT_EXIT_CODE;
    }
    // The answer once: streamed live on a terminal (it is on the screen already), else in full here.
    // A message a hook blocked has no answer: the hook's words, said above, are the last word.
    const unanswered = blockedPrompt && !outcome.final;
    if (!json && !unanswered && !(view.noAnswer && printer.liveModelTurns === 0) && !printer.streamedAnswer(outcome.final))
      o.write(`\n${style.bold('Final answer')}\n${showControls(outcome.final || '(the model gave no text)')}\n`);
    // Said again under the answer, where a script's log or a person's eye ends up.
    if (outcome.status === 'refused') {
      // Not a success: the answer was the model's refusal, and a script must not take it for one.
      // The one paragraph of a failure (exit 1) goes to stderr, with the answer above it on stdout.
      if (!json) process.stderr.write(`savepoint: ${refusedText(outcome.run, outcome.replayed > 0 && outcome.live === 0)}\n`);
      if (saved) o.write(`\n${saved}\n`);
      o.write(`${saved ? '' : '\n'}${totals}\n`);
      return 1;
    }
    if (outcome.changedSince)
      say(
        o,
        style.yellow,
        `Replayed: the files have changed since this run finished (${describeChanges(outcome.changedSince, 3)}); "savepoint run" with its task and no --run starts a new run on them.`,
        style.width,
      );
    if (saved) o.write(`\n${style.green(saved)}\n`);
    o.write(`${saved ? '' : '\n'}${totals}\n`);
    if (outcome.pushFailure) throw outcome.pushFailure; // finished here, but the remote lacks steps: exit 1
    return 0;
  } catch (error) {
    live.close();
    view.onTally?.(tally); // what the turn made live before it failed was spent all the same
    json?.error(error);
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
    process.off('SIGHUP', onSighup);
  }
}

// One session event as the person at the terminal reads it.
function printEvent(event: SessionEvent, printer: StepPrinter, out: Out, style: Style): void {
  switch (event.type) {
    case 'opened': {
      const n = event.recordedSteps;
      out.write(`${headerLines(event.run, event.model, style).join('\n')}\n`);
      if (event.interrupted && event.openedAs !== 'finished')
        say(
          out,
          style.yellow,
          `The previous attempt was stopped by a signal (Ctrl-C, SIGTERM or SIGHUP), not crashed${event.inFlight ? ': the step it left in flight is handled as in flight' : ''}.`,
          style.width,
        );
      const killed = event.killedBeforeRecording;
      if (killed)
        say(
          out,
          style.yellow,
          `Attempt ${killed.attempt} (pid ${killed.pid} on ${showControls(killed.host)}, started ${killed.startedAt}) was killed before it recorded anything, while running #${killed.rerun} again: that step is still in flight.`,
          style.width,
        );
      if (event.instructions)
        say(
          out,
          style.dim,
          `Project instructions: ${event.instructions}, pinned into this run's system prompt (edits to it reach new runs, not this one).`,
          style.width,
        );
      if (event.openedAs === 'finished')
        say(
          out,
          style.dim,
          `This run ${event.refused ? "ended with the model's refusal" : 'finished'} before: replaying its ${n} steps from the journal.`,
          style.width,
        );
      else if (event.openedAs === 'continuing')
        say(
          out,
          style.dim,
          `Continuing: ${n} finished step${n === 1 ? '' : 's'} replay first, then the model answers the follow-up.`,
          style.width,
        );
      else if (n > 0)
        say(
          out,
          style.dim,
          `Resuming: ${n} finished step${n === 1 ? '' : 's'} in the journal replay first, then it goes live.`,
          style.width,
        );
      // Opened from the run's snapshot: only the steps after it replay (and are shown).
      if (event.fromSnapshot)
        say(
          out,
          style.dim,
          `The loop starts from the run's snapshot at step ${event.fromSnapshot}: steps 1 to ${event.fromSnapshot} are not replayed.`,
          style.width,
        );
      if (event.followUpGivenAt)
        say(out, style.dim, `This follow-up was already given at step ${event.followUpGivenAt}: it is not added again.`, style.width);
      return;
    }
    case 'new-run-for-task': {
      const moved = [event.commit ? 'a new commit' : '', event.changes.length ? describeChanges(event.changes, 3) : '']
        .filter(Boolean)
        .join(', ');
      // One line, never wrapped: a log's reader (or grep) finds it whole.
      out.write(
        `${style.yellow(`  ${showControls(`Run ${event.previous} finished this task before the repository moved on (${moved}): starting run ${event.run} for it (--run ${event.previous} replays the old one).`)}`)}\n`,
      );
      return;
    }
    case 'instructions-left-out':
      say(
        out,
        style.yellow,
        `${event.file} is left out of this run's prompt: it resolves to ${event.target}, outside the ${event.within === 'repository' ? 'repository' : 'config folder'}. Instructions are read only from files inside the repository or your config folder.`,
        style.width,
      );
      return;
    case 'fenced':
      say(
        out,
        style.dim,
        `Fenced against ${event.remote}: this run is in ${event.remote}'s journal, so it pushes there as it goes (as --push ${event.remote}) and a command runs only once ${event.remote} has its start; if another machine moved the run on there, this one stops. --no-push opts out.`,
        style.width,
      );
      return;
    case 'finished-over-changes':
      say(
        out,
        style.yellow,
        `${finishedOverChanges(event.changes, event.finishedAt)} The answer below is replayed from the journal, about the files as the run left them ${where(event.step)}; "savepoint run" with its task and no --run starts a new run on the files as they are.`,
        style.width,
      );
      return;
    case 'text':
      return printer.onText(event.text);
    case 'journal-restored':
      say(
        out,
        style.yellow,
        `agent-journal was ${event.found ? 'moved back' : 'deleted'} during the run: put it back at ${event.restored.slice(0, 12)} (see git reflog agent-journal).`,
        style.width,
      );
      return;
    case 'thinking':
      return printer.onThinking(event.text);
    case 'push-retrying':
    case 'push-reached':
    case 'push-caught-up':
    case 'push-behind':
      return say(out, style.yellow, pushEventText(event), style.width);
    case 'model-notice':
      return say(out, style.yellow, modelNoticeText(event), style.width);
    // What a hook said is outside input: its control characters shown, never sent to the terminal.
    case 'hook':
      if (event.event === 'UserPromptSubmit')
        return say(
          out,
          style.yellow,
          `A UserPromptSubmit hook blocked this message: it was not sent to the model. The hook said: ${showControls(event.blocked)}`,
          style.width,
        );
      return say(out, style.dim, `A Stop hook sent the model on: ${showControls(event.block)}`, style.width);
    case 'hook-warning':
      return say(
        out,
        style.yellow,
        `The ${event.event} hook "${showControls(event.command)}" ${showControls(event.message)}; going on as if it had not run.`,
        style.width,
      );
    case 'mcp-unavailable':
      // The message holds the server's stderr: outside input, its control characters shown, not sent.
      return say(
        out,
        style.yellow,
        `MCP server "${event.server}" is not offered to this run: ${showControls(event.message.replace(/\n/g, ' '))}${event.log ? ` (its log: ${showControls(relative(process.cwd(), event.log))})` : ''}`,
        style.width,
      );
    case 'worktree-restored': {
      const why = {
        flag: '--restore',
        'clean-base': "This is a clean checkout of the run's base commit",
        chosen: 'You chose restore',
        fork: "The fork goes on from its parent's files",
      }[event.reason];
      const what =
        event.reason === 'fork'
          ? `put back the files the parent run wrote after the fork point, as they were ${where(event.step)}`
          : `restored the working tree as the journal recorded it ${where(event.step)}`;
      say(out, style.dim, `${why}: ${what} (${event.written.length} written, ${event.deleted.length} deleted).`, style.width);
      const list = (paths: string[]) => `${paths.slice(0, 5).map(showControls).join(', ')}${paths.length > 5 ? ', ...' : ''}`;
      if (event.saved)
        say(
          out,
          style.yellow,
          `Your version of ${event.saved.files.length} file(s) it overwrote or removed is saved in ${event.saved.ref} (${list(event.saved.files)}): get them back with "${event.saved.command}".`,
          style.width,
        );
      if (event.left.length)
        say(out, style.dim, `Left ${event.left.length} file(s) the run never wrote as you have them: ${list(event.left)}`, style.width);
      if (event.unrestorable.length) {
        const names = event.unrestorable.slice(0, 5).map(showControls).join(', ');
        say(
          out,
          style.yellow,
          `${event.unrestorable.length} file(s) of the checkpoint were not restored: their names hold a secret this machine has no value for (${names}${event.unrestorable.length > 5 ? ', ...' : ''}); files that may be them were kept.`,
          style.width,
        );
      }
      if (event.unrevealed.length)
        say(
          out,
          style.yellow,
          `${event.unrevealed.length} restored file(s) keep secret placeholders this machine has no value for: ${event.unrevealed.slice(0, 5).join(', ')}`,
          style.width,
        );
      if (event.kept.length)
        say(
          out,
          style.dim,
          `Kept ${event.kept.length} untracked file(s) the run never recorded: ${event.kept.slice(0, 5).join(', ')}${event.kept.length > 5 ? ', ...' : ''}`,
          style.width,
        );
      return;
    }
    case 'worktree-kept': {
      const listed = describeChanges(event.changes);
      if (event.reason === 'flag')
        say(out, style.yellow, `--keep-worktree: going on with files that differ from the journal (${listed}).`, style.width);
      else if (event.reason === 'default')
        say(
          out,
          style.yellow,
          `Going on with the files you changed (${showControls(listed)}): the model is told which ones in its next request.`,
          style.width,
        );
      else if (event.reason === 'in-flight')
        say(
          out,
          style.yellow,
          `The step in flight when the run stopped may have changed files: ${listed}. Kept as they are (--restore puts back the checkpoint).`,
          style.width,
        );
      else if (event.reason === 'subagents')
        say(
          out,
          style.yellow,
          `Subagents were at work when the run stopped: their changes are kept (${showControls(listed)}), and each goes on from its own journal.`,
          style.width,
        );
      return;
    }
    case 'output':
      return; // the live view shows it; the step's result holds all of it
    case 'subagent': {
      const line = subagentLine(event, style.width);
      if (line) out.write(`${style.dim(line)}\n`);
      return;
    }
    default:
      // A session event this printer does not know yet (compaction) prints nothing.
      if (['replayed', 'started', 'recorded', 'in-flight', 'orphan'].includes(event.type))
        return printer.onEvent(event as Parameters<StepPrinter['onEvent']>[0]);
  }
}

/** How long savepoint takes at most, after Ctrl-C, SIGTERM or SIGHUP, to record the stopped step and end. */
export const STOP_GRACE_MS = 1800;

// The live step in progress and whether a question is open.
interface Doing {
  step: { position: number; kind: string; description: string } | undefined;
  /** A question is open: true, or the step it asks about. */
  asking: boolean | string;
}

// The signal that stopped the run, what was going on then, and the stopped step's recorded summary.
interface Stopped extends Doing {
  signal: StopSignal;
  recorded: string | undefined;
}

// What the stop did, in the words of what happened: a command stopped and recorded, a model call
// dropped (it is made again), a question left unanswered, or a step left in flight.
// With `deadline`, said as savepoint ends at its two seconds with the stop's own work unfinished:
// a step that started is then not yet known to be recorded, and the next run finds out which.
function stoppedText(stopped: Stopped | undefined, { deadline = false } = {}): string {
  const how = `Stopped by ${stopped ? stopSignalWords(stopped.signal) : 'the caller'}`;
  const goOn = 'Every finished step is kept: run the same command again to continue.';
  const step = stopped?.step;
  if (typeof stopped?.asking === 'string') return `${how} at the question for ${stopped.asking}: it did not run. ${goOn}`;
  if (!stopped || !step) return stopped?.asking ? `${how} at the question: nothing ran for it. ${goOn}` : `${how} between steps. ${goOn}`;
  const what = `#${step.position} ${step.description}`;
  if (stopped.recorded !== undefined)
    return `${how}: ${what} is recorded as ${stopped.recorded}, with its output so far; the model is told so when the run goes on. ${goOn}`;
  if (stopped.asking) return `${how} at the question for ${what}: it did not run. ${goOn}`;
  if (step.kind === 'model' || step.kind === 'compact')
    return `${how} during the model call ${what}: it is not recorded and is made again when the run goes on. ${goOn}`;
  if (deadline)
    return `${how} during ${what}, whose record was not finished within the two seconds savepoint takes to stop: the next run finds it recorded, or handles it as in flight. ${goOn}`;
  return `${how} during ${what}, which is left in flight (started, not recorded): the next run handles it as in flight. ${goOn}`;
}

// A note under the header, word-wrapped to the terminal's width, each line indented and painted.
// Every notice may name files, commands or a fetched journal's fields: their controls are made visible.
function say(out: Out, paint: (text: string) => string, text: string, width: number): void {
  out.write(
    `${wrapWords(showControls(text), width - 2, 'columns')
      .map((line) => paint(`  ${line}`))
      .join('\n')}\n`,
  );
}

// "The working tree differs from this run's last checkpoint: modified a.js. The run finished 2 h ago (2026-…)."
function finishedOverChanges(changes: Parameters<typeof describeChanges>[0], finishedAt: string): string {
  return `The working tree differs from this run's last checkpoint: ${describeChanges(changes)}. The run finished ${relativeTime(finishedAt, Date.now())} (${shortTime(finishedAt)} UTC).`;
}

/** The exit code of a run stopped at one of the user's limits (--max-steps, --max-turns, --max-cost). */
const LIMIT_EXIT_CODE = 3;

/** What stopped the run at one of those limits, and how to go on. */
function limitMessage({ limit, value, reached }: LimitReached): string {
  const how = `Every finished step is kept: run the same command with a higher --${limit} (or without it) to go on from here.`;
  if (limit === 'max-cost')
    return `Stopped at the --max-cost limit of $${value}: the run's model calls have cost an estimated $${reached.toFixed(2)}. ${how}`;
  const what = limit === 'max-steps' ? 'steps' : 'model calls';
  return `Stopped at the --${limit} limit of ${value} ${what} (the run has taken ${reached}). ${how}`;
}

/** What a run that ended with the model's refusal says under its answer (`replayed`: it had ended so before). */
function refusedText(run: string, replayed: boolean): string {
  const when = replayed
    ? 'This run ended before with the model\'s refusal (stop reason "refusal"), replayed from the journal'
    : 'The model refused (stop reason "refusal")';
  return `${when}: the task was not done. Give it another instruction with savepoint continue --run ${run} <message>, or start anew with --fresh.`;
}
