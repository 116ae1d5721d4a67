// The prompt of an interactive session: one line read with Node's own readline (line editing,
// history with the arrow keys, kept across the turns of the session). A new interface is opened
// for each line and closed before the turn runs, so that the turn's own questions (approvals,
// drift) and Ctrl-C (SIGINT, the terminal back in its normal mode) work exactly as in `run`.
// Lines typed while a turn runs wait in the terminal and reach the next prompt together: the first
// is the prompt's answer, the others are kept by the session's SessionPrompt and answer the prompts
// after it, in order, as Claude Code queues what is typed during a turn (a closed interface would
// drop them).
import { createInterface } from 'node:readline';
import { showControls } from '../../format/text.js';
import { takeTypedAhead } from '../terminal/typed-ahead.js';

/** What the person did at the prompt: a line, or leave (Ctrl-C on an empty line, Ctrl-D). */
export type PromptAnswer = { line: string } | { leave: true };

/** The most lines of history kept. */
export const HISTORY_SIZE = 500;

// Keys typed ahead of a prompt: the whole lines not yet answered to one, the line begun without
// Enter, and the listener keeping them.
interface TypedAhead {
  lines: string[];
  partial: string;
  keep?: (sequence?: string) => void;
}

/** One session's prompt on one terminal: the history (newest first, readline's order) and the lines typed ahead, kept across its turns. */
export class SessionPrompt {
  /** The lines typed so far, newest first. */
  readonly history: string[] = [];
  private readonly ahead: TypedAhead = { lines: [], partial: '' };

  /** The prompt on `io` (default: this process's terminal). */
  constructor(private readonly io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream } = {}) {}

  /** Notes `line`, given some other way than typed here (the session's first message from the command line), as typed. */
  remember(line: string): void {
    remember(this.history, line);
  }

  /** Reads one line at `prompt`. Ctrl-C on a line with text clears it; on an empty line, or Ctrl-D, leaves. */
  read(prompt: string): Promise<PromptAnswer> {
    return readPromptLine(prompt, this.history, this.ahead, this.io);
  }

  /**
   * Takes what was typed since the last prompt, still waiting in the terminal, into the lines typed
   * ahead: called before a turn's own question (an approval) reads the terminal, so that a message
   * typed during the turn stays a message for after it instead of answering the question
   * (terminal/typed-ahead.ts). Ctrl-C among the keys is Ctrl-C in the turn: SIGINT, and what was
   * typed ahead is dropped, as the terminal drops it.
   */
  async keepTypedAhead(): Promise<void> {
    const { keys, interrupted } = await takeTypedAhead((this.io.input ?? process.stdin) as NodeJS.ReadStream);
    if (interrupted) {
      this.ahead.lines.length = 0;
      this.ahead.partial = '';
      return;
    }
    const lines = typedLines(this.ahead.partial + keys);
    this.ahead.partial = lines.pop()!;
    this.ahead.lines.push(...lines.filter((line) => line.trim() !== ''));
  }
}

// A line answered at a prompt joins the history as readline keeps it: newest first, no repeat of the last.
function remember(history: string[], line: string): void {
  if (line.trim() && history[0] !== line) history.unshift(line);
  history.splice(HISTORY_SIZE);
}

function readPromptLine(prompt: string, history: string[], ahead: TypedAhead, io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream }): Promise<PromptAnswer> {
  const input = io.input ?? process.stdin;
  const output = io.output ?? process.stdout;
  // The last prompt's keys were all handled before this call (it follows their chunk): stop keeping.
  if (ahead.keep) input.off('keypress', ahead.keep);
  const queued = ahead.lines;
  const next = queued.shift();
  if (next !== undefined) {
    output.write(`${prompt}${showControls(next)}\n`);
    remember(history, next);
    return Promise.resolve({ line: next });
  }
  return new Promise((resolve) => {
    // Registered before the interface's own listener, so it sees each key first: the keys after
    // the line that answers (the rest of what was typed ahead) are kept, not lost with the interface.
    let done = false;
    let rest = '';
    // Each whole line at once: the next prompt may be asked for before this tick ends.
    const keep = (sequence?: string) => {
      if (!done || !sequence) return;
      rest += sequence;
      const lines = typedLines(rest);
      rest = lines.pop()!;
      ahead.partial = rest;
      queued.push(...lines.filter((line) => line.trim() !== ''));
    };
    ahead.keep = keep;
    input.on('keypress', keep);
    const rl = createInterface({ input, output, terminal: true, history: [...history], historySize: HISTORY_SIZE, removeHistoryDuplicates: true, prompt });
    const finish = (answer: PromptAnswer) => {
      if (done) return;
      done = true;
      history.splice(0, history.length, ...(rl as unknown as { history: string[] }).history);
      rl.close();
      // The rest of the chunk of keys is handled in this same tick: after it, the turn's own
      // questions read the keys, and they are theirs.
      setImmediate(() => input.off('keypress', keep));
      resolve(answer);
    };
    rl.on('line', (line) => finish({ line }));
    rl.on('close', () => finish({ leave: true }));
    rl.on('SIGINT', () => {
      if (rl.line.length === 0) {
        output.write('\n');
        return finish({ leave: true });
      }
      // The typed line is dropped (end of line, then delete to its start); a second Ctrl-C leaves.
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
    });
    rl.prompt();
    // A line typed ahead without Enter is there to finish, as it was left.
    if (ahead.partial) rl.write(typedText(ahead.partial));
    ahead.partial = '';
  });
}

// Keys typed ahead as lines; the last one has no Enter yet (it is not sent, and it is left as typed).
function typedLines(keys: string): string[] {
  const lines = keys.split(/\r\n|\r|\n/);
  const last = lines.pop()!;
  return [...lines.map(typedText), last];
}

// The text of keys typed ahead: without the escape sequences of keys that edit a line (arrows),
// which a queued line cannot replay, nor other control characters.
function typedText(keys: string): string {
  // eslint-disable-next-line no-control-regex
  return keys.replace(/\x1b\[[0-9;]*[A-Za-z~]|\x1b./g, '').replace(/[\x00-\x1f\x7f]/g, '');
}
