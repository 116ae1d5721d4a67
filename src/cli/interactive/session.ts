// The interactive session: `savepoint` with no arguments on a terminal. The first message is a new
// run's task, every later one a follow-up (a journaled `user` step) of the same run, each turn
// driven as `run` and `continue` drive theirs, in this process, with the same live step lines,
// approvals and Ctrl-C; the steps a turn replays first are counted on one line. Ctrl-C in a turn
// stops its step in progress (recorded as stopped) and comes back to the prompt; Ctrl-C at an
// empty prompt, Ctrl-D or /exit leave with exit 0; SIGHUP (the terminal closed) or SIGTERM leave
// as /exit does, with exit 130. `-c` opens this worktree's most recent run, `-r` a chosen one: its
// steps replay first (an unfinished turn, after a kill -9, is finished then), and the prompt follows.
// Whatever ends it, what was typed and not sent is kept first (unsent.ts) and said where.
// Tested in test/cli/interactive.test.ts, test/cli/interactive-messages.test.ts, test/cli/interactive-unsent.test.ts.
import { runSync } from '../../os/processes.js';
import { prepareLiveModel } from '../../model/index.js';
import { isSavepointError, noFilesLeftCode, TooManyOpenFilesError, UsageError } from '../../errors/index.js';
import { showControls } from '../../format/text.js';
import { stdinHungUp } from '../terminal/hangup.js';
import { openFileLimit } from '../../os/proc.js';
import { continueRun, forkRun, latestRunHere, resumeRun, SessionHold, startRun } from '../../session/index.js';
import { stopAllBackgroundCommands } from '../../tools/index.js';
import { SessionCost } from '../view/run-tally.js';
import type { DriveFlags } from '../view/drive-flags.js';
import { runOnTerminal, settleTrust, STOP_GRACE_MS, type TurnView } from '../view/terminal-run.js';
import type { TrustDeclined } from '../view/trust-question.js';
import { styleFor, type Style } from '../terminal/style.js';
import { pickRun } from './picker.js';
import { SessionPrompt } from './prompt.js';
import { parsePromptLine, SLASH_COMMANDS } from './slash-commands.js';
import { completeLine } from './completion.js';
import { TurnKeys } from './turn-keys.js';
import { keepUnsent, keptLine, restoredLine, takeUnsent, unsentDir, type KeptUnsent } from './unsent.js';
import { relative } from 'node:path';
import type { Repository } from '../../git/repository.js';
import { sessionSettings } from '../view/session-settings.js';
import type { CustomCommand } from '../../settings/index.js';

/** How the session opens: on a new run (the first message), this worktree's latest run, or a chosen one. */
export interface SessionStart {
  continueLatest?: boolean;
  /** A run id, or true to pick one on the terminal. */
  resume?: string | true;
  /** The first message, given on the command line (`savepoint "fix the tests"`): sent as if typed. */
  message?: string;
  /** `--run <id>`: the id of the run the first message starts (or continues, when it is that task's run). */
  run?: string;
}

/** The prompt's text. */
export const PROMPT = '› ';

/** Runs the session until the person leaves; resolves with the exit code (0; 1 when -c / -r cannot open the run). */
export async function runInteractive(flags: DriveFlags, start: SessionStart = {}): Promise<number> {
  // Tab completes the slash commands' names (the custom ones as they are on disk now) and @ paths.
  const names = () => [
    ...SLASH_COMMANDS.map(([usage]) => usage.slice(1).split(' ')[0]!),
    ...(customCommands(flags, []).commands ?? []).map((command) => command.name),
  ];
  const prompt = new SessionPrompt({ complete: (line) => completeLine(line, { commands: names, cwd: process.cwd() }) });
  // The terminal's bracketed paste, asked for by the prompt, ends with the session however it ends.
  const endPaste = () => prompt.endPaste();
  process.once('exit', endPaste);
  // The run a turn ended on stays open for the next message (session/hold.ts), until the session ends.
  const hold = new SessionHold();
  // SIGHUP (the terminal closed under the session) or SIGTERM ends the session as /exit does: the
  // held run closes, background commands stop, and the process exits as itself (its compiled code
  // kept for the next start), where the signal's default action killed it at the prompt. In a
  // turn, terminal-run's own handlers stop the turn first; the session then ends instead of asking
  // again. As a run does, it ends within two seconds of the signal, with exit 130.
  let stoppedBy: NodeJS.Signals | undefined;
  // What was typed and not sent is kept on disk however the session ends (unsent.ts): at once on a
  // signal (the line at the prompt, the lines typed ahead), again at the end with what came since,
  // and at the process's exit when something ends it sooner (the grace period, a second signal).
  const unsent = new UnsentKeeper(prompt);
  const endOnSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy) process.exit(130); // a second signal: no more waiting
    stoppedBy = signal;
    prompt.leave();
    unsent.keep(signal);
    setTimeout(() => process.exit(130), STOP_GRACE_MS).unref();
  };
  // The terminal is gone after SIGHUP: nothing is said there then (the next session says it).
  const keepAtExit = () => unsent.keep(stoppedBy, stoppedBy !== 'SIGHUP');
  // A terminal closed under the session fails the next change of its mode (EIO) before its SIGHUP
  // comes: the session leaves, what was typed kept first, instead of dying of an unhandled error.
  const terminalGone = () => {
    prompt.leave();
    unsent.keep('terminal closed');
  };
  process.on('SIGHUP', endOnSignal);
  process.on('SIGTERM', endOnSignal);
  process.on('exit', keepAtExit);
  process.stdin.on('error', terminalGone);
  try {
    const code = await session(flags, start, prompt, hold, unsent);
    // A terminal that closed ends the session as its SIGHUP does, whichever came first: the end of
    // its input (the prompt leaves) or the signal.
    return stoppedBy || stdinHungUp() ? 130 : code;
  } finally {
    unsent.keep(stoppedBy, stoppedBy !== 'SIGHUP');
    await hold.close();
    process.off('SIGHUP', endOnSignal);
    process.off('SIGTERM', endOnSignal);
    process.off('exit', keepAtExit);
    process.stdin.off('error', terminalGone);
    process.off('exit', endPaste);
    endPaste();
    // Background commands the session's runs started end with it (/exit, Ctrl-D, an error).
    await stopAllBackgroundCommands();
  }
}

// The session itself, on its prompt.
async function session(
  flags: DriveFlags,
  start: SessionStart,
  prompt: SessionPrompt,
  hold: SessionHold,
  unsent: UnsentKeeper,
): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError(
      'An interactive savepoint session needs a terminal. Without one, use "savepoint run <task>" (or -p <task>), then "savepoint continue <message>" for each follow-up.',
    );
  }
  if (flags.json) throw new UsageError('--json is for "savepoint run", "resume" and "continue": an interactive session prints for people.');
  const out = process.stdout;
  const style = styleFor(out);
  const state: SessionState = {
    flags,
    run: undefined,
    newRun: start.run,
    model: flags.model,
    runModel: undefined,
    cost: new SessionCost(),
    said: new Set(),
    remembered: [],
    prompt,
    declinedTrust: new Set(),
    hold,
  };
  // A settings file that cannot be used stops the session here, before its prompt (each turn reads
  // them again); the folder's trust is asked here too, once, before anything runs (a turn asks
  // again only when the files changed since).
  const settled = await settleTrust(flags, { said: state.said, declinedTrust: state.declinedTrust }, true);
  if (typeof settled === 'number') return settled;
  // Found once: the session's folder stays the same, so its turns do not ask git again.
  state.repository = settled.repository;
  unsent.dir = unsentDir(settled.repository);
  // The model's client (the SDK, Node's fetch) loads now, while the run opens and the person types:
  // loaded at the first request, it was most of the first message's Enter -> request. The prompt
  // does not wait for it (that moved ~300 ms to the time before the prompt, more than it saved).
  void prepareLiveModel(flags.model ?? settled.defaultModel);

  if (start.continueLatest || start.resume) {
    const id =
      start.resume === true
        ? await pickRun(process.cwd(), style, out)
        : typeof start.resume === 'string'
          ? start.resume
          : await latestRunHere();
    if (!id) throw new UsageError('This worktree has no runs to continue yet: run "savepoint" and type a task.');
    state.run = id;
    // Its steps replay (quietly) and an unfinished turn goes live, as `resume` does. A run that
    // cannot be opened (no such run, another process on it) ends the session with that error, exit 1.
    const opening = await turn(state, (session) => resumeRun({ ...session, run: id }), { ...flags, model: undefined });
    if (!opening.opened) return 1;
    // --model with -c or -r is a change of the run's model, as /model is (nothing when it already uses it).
    if (flags.model !== undefined && state.run) await changeModel(state, flags.model, style);
  } else {
    out.write(
      `${style.bold('savepoint')}  ${style.dim('type a task; every later message is a follow-up of the same run. /help lists the commands, /exit leaves.')}\n`,
    );
  }
  // What the last session here typed and did not send: said, and in the history for the up arrow.
  const kept = takeUnsent(unsent.dir);
  if (kept.length) {
    for (const text of kept.flatMap((found) => found.texts)) prompt.recall(text);
    out.write(`  ${style.yellow(restoredLine(kept))}\n`);
  }
  if (start.message) {
    out.write(`${PROMPT}${showControls(start.message)}\n`); // shown as if typed, above its turn
    prompt.remember(start.message);
    await message(state, start.message);
  }

  for (;;) {
    const answer = await prompt.read(PROMPT);
    if ('leave' in answer) return 0;
    const line = parsePromptLine(answer.line);
    switch (line.type) {
      case 'message':
        // A message typed with "//" starts with "/" as typed, never as a custom command.
        if (line.text) await message(state, line.text, answer.line.trim().startsWith('//'));
        break;
      case 'exit':
        return 0;
      case 'help':
        out.write(helpText(customCommands(flags, state.remembered, state.repository), style));
        break;
      case 'model':
        await changeModel(state, line.model, style);
        break;
      case 'cost':
        out.write(state.cost.line() ? `  ${style.dim(state.cost.line()!)}\n` : '  No model calls yet in this session.\n');
        break;
      case 'diff':
      case 'runs':
        if (line.type === 'diff' && !state.run) out.write('  No run yet: the first message starts one.\n');
        else {
          prompt.endPaste(); // the terminal is the other command's (a pager) until the next prompt
          ownCommand(line.type === 'diff' ? ['diff', state.run!] : ['runs']);
        }
        break;
      case 'fork':
        await fork(state, line.step, line.bad, style);
        break;
      case 'compact':
        await compactNow(state);
        break;
      case 'new':
        await state.hold.close();
        state.run = undefined;
        state.cost.clear();
        out.write('  The next message starts a new run.\n');
        break;
      case 'unknown': {
        // A custom command is a message: the turn sends its text (expanded, and recorded, there).
        const custom = customCommands(flags, state.remembered, state.repository).commands?.find((command) => command.name === line.name);
        if (custom && !custom.untrusted) await message(state, answer.line.trim());
        else if (custom)
          out.write(
            `  ${showControls(`/${line.name} is a command of this repository (${relative(process.cwd(), custom.file)}), left out because this folder is not trusted: run savepoint with --trust to trust it (docs/trust.md).`)}\n`,
          );
        else out.write(`  There is no /${showControls(line.name)}: /help lists the commands.\n`);
        break;
      }
    }
  }
}

// Keeps what the person typed and did not send when the session ends (unsent.ts), in one file for
// the session, rewritten when more is found; says where on the terminal, once, after the last keep.
class UnsentKeeper {
  /** Where the file goes: set once the session knows its repository. */
  dir: string | undefined;
  private kept: KeptUnsent | undefined;
  private said = false;

  constructor(private readonly prompt: SessionPrompt) {}

  /** Keeps what is unsent now (nothing when nothing is); with `say`, tells where on the terminal. */
  keep(endedBy: string | undefined, say = false): void {
    const texts = this.prompt.unsent();
    if (!texts.length) return;
    const same = this.kept && JSON.stringify(this.kept.texts) === JSON.stringify(texts);
    let failed: unknown;
    if (!same) {
      try {
        // Before the session knew its repository (its trust question): the user's folder.
        this.kept = keepUnsent(this.dir ?? unsentDir(undefined), texts, this.kept?.file, endedBy) ?? this.kept;
      } catch (error) {
        failed = error;
      }
    }
    if (!say || this.said) return;
    this.said = true;
    if (failed || !this.kept)
      // Not kept (a full disk, a read-only folder): the terminal is the last place to show it.
      return void process.stderr.write(
        `savepoint: not sent, and not kept (${showControls(failed instanceof Error ? failed.message : String(failed))}):\n${texts.map((text) => `  ${showControls(text)}\n`).join('')}`,
      );
    process.stdout.write(`  ${keptLine(this.kept)}\n`);
  }
}

// The custom commands as the files are now (a session may add or edit one between messages), and
// those a built-in's name hides; none when the settings cannot be read (the next turn says why).
function customCommands(
  flags: DriveFlags,
  remembered: string[],
  repository?: Repository,
): { commands?: CustomCommand[]; shadowed?: CustomCommand[] } {
  try {
    const { commands, shadowed } = sessionSettings(flags, process.cwd(), process.env, remembered, repository);
    return { commands, shadowed };
  } catch {
    return {};
  }
}

// /help: the built-in commands, then the custom ones with their descriptions and where each is from.
function helpText({ commands = [], shadowed = [] }: { commands?: CustomCommand[]; shadowed?: CustomCommand[] }, style: Style): string {
  const lines = SLASH_COMMANDS.map(([usage, what]) => `  ${usage.padEnd(14)} ${style.dim(what)}`);
  if (commands.length) lines.push('', '  Custom commands (.savepoint/commands, .claude/commands, your own):');
  for (const command of commands) {
    const usage = showControls(`/${command.name}${command.argumentHint ? ` ${command.argumentHint}` : ''}`);
    const from = command.source === 'user' ? 'yours' : relative(process.cwd(), command.file);
    const what = command.untrusted ? 'left out: this folder is not trusted (--trust)' : command.description;
    lines.push(`  ${usage.padEnd(14)} ${style.dim(showControls(`${what}${what ? ' ' : ''}(${from})`))}`);
  }
  for (const command of shadowed)
    lines.push(`  ${style.dim(showControls(`${relative(process.cwd(), command.file)} is not used: the built-in /${command.name} wins.`))}`);
  return `${lines.join('\n')}\n`;
}

// What the session knows between turns.
interface SessionState {
  flags: DriveFlags;
  /** The run the next message goes to; undefined: the next message starts one. */
  run: string | undefined;
  /** The id --run gave the session's first new run (used once). */
  newRun: string | undefined;
  /** The model a new run starts with (--model, or /model before the first message). */
  model: string | undefined;
  /** The model the session's run uses, as its last turn opened it. */
  runModel: string | undefined;
  /** The run's totals as the last turn found them, and what the session's turns made live on it (/cost). */
  cost: SessionCost;
  /** Header lines said in this session (how commands run), not repeated at every message. */
  said: Set<string>;
  /** Allow rules `a` remembered for this session: each turn reads the settings files again and adds these. */
  remembered: string[];
  /** The session's prompt: its history and the lines typed ahead, which a turn's approval question leaves to it. */
  prompt: SessionPrompt;
  /** The trust the person declined in this session: a turn does not ask again while the files stay the same. */
  declinedTrust: TrustDeclined;
  /** The run the last turn ended on, held open: the next message to it replays nothing. */
  hold: SessionHold;
  /** The repository around the session's folder, found at its start (undefined outside one, or before). */
  repository?: Repository;
}

// A message: a new run's task, or a follow-up of the session's run.
async function message(state: SessionState, text: string, noCommands = false): Promise<void> {
  if (!state.run) {
    // A new run each time (a session's task is typed, not a command repeated), unless --run named it.
    const named = state.newRun;
    state.newRun = undefined;
    await turn(
      state,
      (session) => startRun({ ...session, task: text, ...(named ? { run: named } : { fresh: true }) }),
      { ...state.flags, model: state.model },
      false,
      noCommands,
      text,
    );
    return;
  }
  const run = state.run;
  // Every message the person sends is recorded once, even one that repeats the last word for word.
  await turn(
    state,
    (session) => continueRun({ ...session, message: text, newMessage: true, run }),
    { ...state.flags, model: undefined },
    false,
    noCommands,
    text,
  );
}

// /model <id>: before the first message, the new run's model; after it, a config step of the run now.
async function changeModel(state: SessionState, model: string | undefined, style: Style): Promise<void> {
  if (!model)
    return void process.stdout.write(
      `  ${state.run ? `The run uses ${state.runModel ? showControls(state.runModel) : 'the model in its header above'}.` : `A new run starts with ${state.model ? showControls(state.model) : "the settings' or the default model"}.`} /model <id> changes it.\n`,
    );
  if (!state.run) {
    state.model = model;
    return void process.stdout.write(`  The new run starts with ${showControls(model)}.\n`);
  }
  const run = state.run;
  const { configured, failed } = await turn(
    state,
    (session) => continueRun({ ...session, message: '', model, run }),
    { ...state.flags, model },
    true,
  );
  if (failed) return;
  // Giving the model the run already uses records nothing: say so rather than claim a step.
  const said = configured
    ? `From the next turn on, ${showControls(model)} answers (recorded as a config step).`
    : `The run already uses ${showControls(model)}: nothing to change.`;
  process.stdout.write(`  ${style.dim(said)}\n`);
}

// /compact: the run's conversation summarized now (a config step, then a compact step), so the next
// turns send the summary and the recent turns instead of everything.
async function compactNow(state: SessionState): Promise<void> {
  if (!state.run) return void process.stdout.write('  No run yet: there is nothing to compact.\n');
  const run = state.run;
  await turn(state, (session) => continueRun({ ...session, message: '', compact: true, run }), { ...state.flags, model: undefined }, true);
}

// /fork <step>: a new run with the steps before <step>; the next message goes to it.
async function fork(state: SessionState, step: number | undefined, bad: string | undefined, style: Style): Promise<void> {
  if (!state.run) return void process.stdout.write('  No run yet to fork: the first message starts one.\n');
  if (step === undefined)
    return void process.stdout.write(
      `  /fork needs a step number (1 or more)${bad ? `, not "${bad}"` : ''}: /fork 4 keeps steps 1-3 and does step 4 anew.\n`,
    );
  try {
    const forked = await forkRun({ from: state.run, at: step });
    state.run = forked.id;
    process.stdout.write(
      `  ${style.dim(`Forked ${forked.from} at step ${step} as ${forked.id}: the next message goes to it, on ${forked.from}'s files as they were at step ${step} (the files it wrote later are put back then, and saved first).`)}\n`,
    );
  } catch (error) {
    report(error);
  }
}

// One turn through runOnTerminal (the same printer, approvals and Ctrl-C as `run`); an error is
// told in one paragraph and the prompt comes back. Resolves with whether the turn recorded a
// config step (/model's change), whether it ended in an error, and whether it opened its run.
async function turn(
  state: SessionState,
  drive: Parameters<typeof runOnTerminal>[0],
  flags: DriveFlags,
  noAnswer = false,
  noCommands = false,
  message?: string,
): Promise<{ configured: boolean; failed: boolean; opened: boolean }> {
  // A run exists in the journal once a step of it is recorded: a new run stopped before that does
  // not. The session's run before this turn (a follow-up's, -c's, a fork's) exists already, even
  // when this turn is refused before it opens (a lock held, a settings file broken meanwhile).
  let recorded = state.run !== undefined;
  let configured = false;
  let failed = false;
  let opened = false;
  // The message is the run's once recorded: a new run's task once the run exists (its first step
  // recorded), a follow-up as its `user` step. Until then, a session ended by a signal keeps it.
  const newRun = !recorded;
  state.prompt.sendingMessage(message);
  // Esc stops the turn as Ctrl-C does (the same SIGINT, so the same stop and the same record); the
  // keys typed meanwhile are the prompt's. A question of the turn reads the terminal itself: the
  // keys are not read from it then, and again from the next step on.
  const keys = new TurnKeys({ stop: () => process.kill(process.pid, 'SIGINT'), typed: (typed) => state.prompt.addTypedAhead(typed) });
  const view: TurnView = {
    quietReplay: true,
    inSession: true,
    noAnswer,
    noCommands,
    onEvent: (event) => {
      if (event.type === 'started') keys.resume();
      if (event.type === 'opened') {
        opened = true;
        state.run = event.run;
        state.runModel = event.model;
        recorded ||= event.recordedSteps > 0;
      } else if (event.type === 'recorded' || event.type === 'replayed') recorded = true;
      if (newRun ? recorded : (event.type === 'recorded' || event.type === 'replayed') && event.kind === 'user')
        state.prompt.sendingMessage(undefined);
      if (event.type === 'started' && event.kind === 'config') configured = true;
    },
    onTally: (tally) => state.cost.add(tally),
    said: state.said,
    remembered: state.remembered,
    declinedTrust: state.declinedTrust,
    // Lines typed during the turn are messages for after it, not the answer to its question.
    beforeQuestion: () => {
      keys.pause();
      return state.prompt.keepTypedAhead();
    },
    carried: () => state.cost.lastTally,
    hold: state.hold,
    ...(state.repository ? { repository: state.repository } : {}),
  };
  try {
    keys.resume();
    failed = (await runOnTerminal(drive, flags, process.stdout, view)) !== 0;
  } catch (error) {
    failed = true;
    report(error);
  } finally {
    keys.pause();
    // Ended without being recorded, in a session that goes on: the person is told, and the
    // history has it; only a session's end makes it unsent text.
    if (!state.prompt.hasLeft()) state.prompt.sendingMessage(undefined);
  }
  if (!recorded && state.run) {
    state.run = undefined;
    process.stdout.write('  Nothing of this run was recorded, so the next message starts a new one.\n');
  }
  return { configured, failed, opened };
}

// An error as the CLI tells it, without leaving the session: one paragraph, a stack trace only with SAVEPOINT_DEBUG=1.
function report(error: unknown): void {
  const debug = process.env.SAVEPOINT_DEBUG === '1';
  const noFiles = noFilesLeftCode(error);
  if (noFiles && !(error instanceof TooManyOpenFilesError)) error = new TooManyOpenFilesError(noFiles, openFileLimit(), error);
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `savepoint: ${isSavepointError(error) ? showControls(message) : `unexpected error: ${showControls(message)}. Every finished step is kept in the journal.`}\n`,
  );
  if (debug && error instanceof Error) process.stderr.write(`${error.stack}\n`);
}

// Another savepoint command, run as its own process on this terminal (diff, runs): the same output as typing it.
function ownCommand(args: string[]): void {
  // Ctrl-C while it runs stops it, not the session (the terminal sends SIGINT to both).
  const stay = () => {};
  process.on('SIGINT', stay);
  try {
    runSync(process.execPath, [...process.execArgv, process.argv[1]!, ...args], {
      stdio: 'inherit',
      env: { ...process.env, SAVEPOINT_PAGER: process.env.SAVEPOINT_PAGER ?? 'cat' },
    });
  } finally {
    setImmediate(() => process.off('SIGINT', stay)); // after a SIGINT that arrived meanwhile is handled
  }
}
