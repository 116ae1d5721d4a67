// One run's background commands (run_bash's `run_in_background`, read by bash_output, stopped by
// kill_bash): their ids, and what each tool call answers about one. The ids are `bg-<n>`, the run's
// n-th background command, counted from the journal (the intents of background starts, the one
// starting now included), so a resume never hands out an id the run used before. A command lives
// in this process only (os/background-process.ts): one started by an earlier attempt stopped with
// it, and the answer about it says so and when, from the journal (BackgroundJournal).
//
// The commands of a run are kept per process and per run (backgroundCommandsOf), not per opening
// of its journal: an interactive session opens the run again at each message, and a server the
// model started at one message still runs at the next. The session stops them at its end.
// Tested in test/tools/background.test.ts.
import { formatDuration } from '../format/numbers.js';
import { ellipsize, oneLine, showControls } from '../format/text.js';
import { BackgroundProcess, MAX_UNREAD_BYTES, type BackgroundExit } from '../os/background-process.js';
import type { CommandLine } from '../os/processes.js';
import { toolError, toolOk } from './define-tool.js';
import { lastLine } from './truncate.js';
import type { ToolInputSchema, ToolResult } from './types.js';

/** The input of bash_output and kill_bash: which of the run's background commands. */
export const BACKGROUND_ID_SCHEMA: ToolInputSchema = {
  type: 'object',
  properties: { id: { type: 'string', description: "The background command's id, as run_bash returned it (bg-1, ...)." } },
  required: ['id'],
  additionalProperties: false,
};

/** A background command an earlier attempt of the run started, as its journal tells it. */
export interface PastStart {
  command: string;
  /** The step that started it. */
  step: number;
  /** When savepoint stopped, and with it the command (ISO 8601); undefined when the journal cannot tell. */
  stoppedAt?: string;
  /** How that time is known, in words for the model: `when that savepoint process ended: the run finished`, `that savepoint process was killed (...); this is when it recorded its last step, #12, ...`. */
  stoppedHow: string;
}

/** What the background commands need from the run's journal (the session provides it). */
export interface BackgroundJournal {
  /** How many background starts the journal records (their intents), the one starting now included. */
  startsRecorded(): Promise<number>;
  /** The n-th background start the journal records, from an earlier attempt: what it ran and when it stopped. */
  pastStart(n: number): Promise<PastStart | undefined>;
  /** Records, on this machine only, a running command's process group (locks/live-commands.ts): a second line after a crash. */
  track?(pgid: number, description: string): void;
  /** Forgets a group `track` recorded, once it has ended. */
  untrack?(pgid: number): void;
}

interface Held {
  id: string;
  command: string;
  process: BackgroundProcess;
  /** Stopped by kill_bash, or with the run (its end): said instead of a bare signal. */
  stoppedBy?: 'kill_bash' | 'the run';
}

/** The background commands of one run in this process. */
export class BackgroundCommands {
  private readonly held = new Map<string, Held>();
  private last: number | undefined;
  private journal: BackgroundJournal | undefined;

  constructor(readonly run: string) {}

  /** The journal the ids are counted from and past commands read from: the run's, as opened now. */
  useJournal(journal: BackgroundJournal): void {
    this.journal = journal;
  }

  /** Starts `line` (run_bash's command line for the command) in `cwd` as the run's next background command; answers its id and how to read it. */
  async start(line: CommandLine, cwd: string, command: string): Promise<ToolResult> {
    // Asked of the journal at each start: another process may have gone on with the run between
    // two messages of a session (the run is not held between them).
    const n = Math.max((this.last ?? 0) + 1, (await this.journal?.startsRecorded()) ?? 0);
    this.last = n;
    const id = `bg-${n}`;
    const journal = this.journal;
    let pgid: number | undefined;
    const child = new BackgroundProcess(line, cwd, () => {
      if (pgid) journal?.untrack?.(pgid);
    });
    pgid = child.pgid;
    if (pgid) journal?.track?.(pgid, `run_bash "${oneLine(command, 50)}" in the background (${id})`);
    this.held.set(id, { id, command, process: child });
    return toolOk(
      `Started in the background as ${id}. Read what it prints with bash_output {"id": "${id}"} (each read gives what came since the last one, and whether it still runs); stop it with kill_bash {"id": "${id}"}. It stops when this run ends.`,
      `started ${id}`,
    );
  }

  /** bash_output: what `id` printed since the last read and whether it still runs (its exit code once done). */
  async output(id: string): Promise<ToolResult> {
    const held = this.held.get(id);
    if (!held) return this.notHere(id);
    const read = held.process.read();
    const state = held.process.exit
      ? ended(held, held.process.exit)
      : `still running (for ${formatDuration(Date.now() - held.process.startedAt.getTime())})`;
    const text = shownOutput(read.output, read.dropped);
    const lines = read.output === '' ? 'no new output' : `${read.output.replace(/\n$/, '').split('\n').length} new line(s)`;
    const tail = lastLine(read.output);
    return toolOk(
      `${id}: ${state}\n${text}`,
      `${id} ${held.process.exit ? shortEnd(held, held.process.exit) : 'running'}, ${lines}${tail ? `: ${oneLine(tail, 40)}` : ''}`,
    );
  }

  /** kill_bash: stops `id`'s whole process group (safe to repeat: one already ended says so). */
  async kill(id: string): Promise<ToolResult> {
    const held = this.held.get(id);
    if (!held) return this.notHere(id, true);
    if (held.process.exit) {
      const read = held.process.read();
      const rest = read.output || read.dropped ? `\nIts output since the last read:\n${shownOutput(read.output, read.dropped)}` : '';
      return toolOk(`${id} had already ended (${ended(held, held.process.exit)}): nothing to stop.${rest}`, `${id} had already ended`);
    }
    held.stoppedBy = 'kill_bash';
    await held.process.stop();
    const read = held.process.read();
    return toolOk(
      `${id} was stopped (its whole process group). Its output since the last read:\n${shownOutput(read.output, read.dropped)}`,
      `stopped ${id}`,
    );
  }

  /** Stops every command of the run still running (the run ended); resolves once they are gone. */
  async stopAll(): Promise<void> {
    const stopping = [...this.held.values()].filter((held) => !held.process.exit);
    for (const held of stopping) held.stoppedBy = 'the run';
    await Promise.all(stopping.map((held) => held.process.stop(500)));
  }

  // An id this process does not hold: one an earlier attempt started (it stopped with savepoint),
  // or none at all.
  private async notHere(id: string, killing = false): Promise<ToolResult> {
    const n = /^bg-([1-9][0-9]{0,8})$/.exec(id)?.[1];
    const past = n ? await this.journal?.pastStart(Number(n)) : undefined;
    if (!past) {
      const known = [...this.held.keys()];
      const listed = known.length
        ? `Its background commands in this session: ${known.join(', ')}.`
        : 'No background command of it runs now.';
      return toolError(
        `There is no background command "${showControls(ellipsize(id, 40))}" in this run. ${listed} A background command is started with run_bash and run_in_background: true, and its id (bg-1, bg-2, ...) is in that call's result.`,
        'error: no such background command',
      );
    }
    const when = past.stoppedAt ? ` at ${past.stoppedAt}: ${past.stoppedHow}` : `: ${past.stoppedHow}`;
    const text =
      `${id} (\`${oneLine(showControls(past.command), 200)}\`, started at step #${past.step}) is not running: it stopped with savepoint${when}. ` +
      'Background commands never outlive the savepoint process that started them, and a resumed run does not start them again on its own. ' +
      `Its output after the last bash_output is not kept.${killing ? ' There is nothing to stop.' : ' Start it again with run_bash (run_in_background: true) if it is still needed.'}`;
    return toolOk(text, `${id} stopped with savepoint${past.stoppedAt ? ` at ${past.stoppedAt}` : ''}`);
  }
}

// The output of a read, as the model gets it: the bytes dropped before it said first.
function shownOutput(output: string, dropped: number): string {
  const cut = dropped
    ? `[${dropped} bytes of earlier output were dropped: savepoint keeps at most ${MAX_UNREAD_BYTES / 1024 / 1024} MB of unread output per background command; read more often]\n`
    : '';
  const body = output.replace(/\n$/, '');
  return `${cut}${body === '' ? '(no new output)' : body}`;
}

function ended(held: Held, exit: BackgroundExit): string {
  if (held.stoppedBy === 'kill_bash') return 'stopped by kill_bash';
  if (held.stoppedBy === 'the run') return 'stopped when the run ended';
  return exit.code !== undefined ? `exited with code ${exit.code}` : exit.signal ? `killed by ${exit.signal}` : 'failed to start';
}

function shortEnd(held: Held, exit: BackgroundExit): string {
  if (held.stoppedBy) return 'stopped';
  return exit.code !== undefined ? `exit ${exit.code}` : exit.signal ? `killed by ${exit.signal}` : 'failed to start';
}

// The background commands of each run in this process (see the header).
const runs = new Map<string, BackgroundCommands>();

/** The background commands of `run` in this process: the same object at every opening of the run. */
export function backgroundCommandsOf(run: string): BackgroundCommands {
  let commands = runs.get(run);
  if (!commands) runs.set(run, (commands = new BackgroundCommands(run)));
  return commands;
}

/** Stops the background commands of every run in this process (an interactive session's end). */
export async function stopAllBackgroundCommands(): Promise<void> {
  await Promise.all([...runs.values()].map((commands) => commands.stopAll()));
}
