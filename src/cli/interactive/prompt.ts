// The prompt of an interactive session: one line read with Node's own readline (line editing,
// history with the arrow keys, kept across the turns of the session). A new interface is opened
// for each line and closed before the turn runs, so that the turn's own questions (approvals,
// drift) and Ctrl-C (SIGINT, the terminal back in its normal mode) work exactly as in `run`.
// Lines typed while a turn runs wait in the terminal and reach the next prompt together: the first
// is the prompt's answer, the others are kept by the session's SessionPrompt and answer the prompts
// after it, in order, as Claude Code queues what is typed during a turn (a closed interface would
// drop them). A message is what the person sent, whole: the prompt asks the terminal for bracketed
// paste (ESC[?2004h), and a pasted block of several lines is one message, its newlines kept, sent
// with the Enter after it (readline alone would send each of its lines as a message).
// Tested in test/cli/session-prompt.test.ts, test/cli/interactive-unsent.test.ts.
import { createInterface } from 'node:readline';
import { showControls } from '../../format/text.js';
import {
  BRACKETED_PASTE_OFF,
  BRACKETED_PASTE_ON,
  PASTE_END,
  PASTE_START,
  pastedText,
  splitPastes,
  takeTypedAhead,
  typedMessages,
  typedText,
} from '../terminal/typed-ahead.js';

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
  // Set by leave(): every prompt from then on answers leave at once.
  private left = false;
  // Ends the line being read now, if any (with leave).
  private endLine: (() => void) | undefined;
  // The text of the line being read now (what is typed on it, a pasted block begun), if one is open.
  private lineText: (() => string) | undefined;
  // What was on the line when its prompt ended without sending it (a signal, the terminal's end).
  private leftLine = '';
  // The message sent and not yet recorded by its turn: unsent after all if the session ends first.
  private sending: string | undefined;

  /** The prompt on `io` (default: this process's terminal); `complete` answers Tab (readline's completer). */
  constructor(
    private readonly io: {
      input?: NodeJS.ReadableStream;
      output?: NodeJS.WritableStream;
      complete?: (line: string) => [string[], string];
    } = {},
  ) {}

  /** Notes `line`, given some other way than typed here (the session's first message from the command line), as typed. */
  remember(line: string): void {
    remember(this.history, line);
  }

  /** Asks the terminal to stop bracketing pasted text: the session ends, or hands the terminal to another program. */
  endPaste(): void {
    const output = this.io.output ?? process.stdout;
    if ((output as { isTTY?: boolean }).isTTY) output.write(BRACKETED_PASTE_OFF);
  }

  /** Reads one line at `prompt`. Ctrl-C on a line with text clears it; on an empty line, or Ctrl-D, leaves. */
  read(prompt: string): Promise<PromptAnswer> {
    if (this.left) return Promise.resolve({ leave: true });
    return readPromptLine(prompt, this.history, this.ahead, this.io, {
      opened: (end, text) => {
        this.endLine = end;
        this.lineText = text;
      },
      closed: (unsent) => {
        this.endLine = this.lineText = undefined;
        if (unsent.trim()) this.leftLine = unsent;
      },
    });
  }

  /**
   * What was typed and not sent, oldest first: the line at a prompt that ended without sending it
   * (or the one open now), the lines typed ahead and not yet answered to a prompt, and the line
   * begun without Enter. Blank ones are left out. The session keeps them when it ends (unsent.ts).
   */
  unsent(): string[] {
    const texts = [
      ...(this.left && this.sending !== undefined ? [this.sending] : []),
      this.lineText?.() ?? this.leftLine,
      ...this.ahead.lines,
      typedText(this.ahead.partial),
    ];
    return texts.filter((text) => text.trim() !== '');
  }

  /**
   * Notes the message a turn is sending until the turn has recorded it (undefined then): should the
   * session end first (a signal during a new run's first model call, before the run exists), it
   * was never sent after all, and unsent() has it.
   */
  sendingMessage(text: string | undefined): void {
    this.sending = text;
  }

  /** Notes `text` in the history as the newest line, without sending it: the up arrow brings it back (unsent text an earlier session kept). */
  recall(text: string): void {
    remember(this.history, text);
  }

  /**
   * Leaves: the line being read, if any, and every later prompt answer leave (the session ends on a
   * signal). What was typed on that line is not sent, as when the terminal is closed under it:
   * unsent() has it, for the session to keep.
   */
  leave(): void {
    this.left = true;
    if (!this.endLine) return;
    this.endLine();
    // The line left behind ends there, as Enter would end it: what is said next starts a line of its own.
    (this.io.output ?? process.stdout).write('\n');
  }

  /** Whether leave() was called: the session is ending. */
  hasLeft(): boolean {
    return this.left;
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
      // Dropped from the prompts to come, as the terminal drops what is typed before a Ctrl-C, but
      // not lost: the history has each line, so the up arrow brings back one typed by mistake then.
      this.addTypedAhead(keys.slice(0, keys.lastIndexOf('\x03')));
      for (const line of [...this.ahead.lines, typedText(this.ahead.partial)]) remember(this.history, line);
      this.ahead.lines.length = 0;
      this.ahead.partial = '';
      return;
    }
    this.addTypedAhead(keys);
  }

  /** Adds keys typed during a turn (read by the turn's own reader: turn-keys.ts) to the lines typed ahead: each whole line a message for the prompts after it. */
  addTypedAhead(keys: string): void {
    const lines = typedMessages(this.ahead.partial + keys);
    this.ahead.partial = lines.pop()!;
    this.ahead.lines.push(...lines.filter((line) => line.trim() !== ''));
  }
}

// A line answered at a prompt joins the history as readline keeps it: newest first, no repeat of the last.
function remember(history: string[], line: string): void {
  if (line.trim() && history[0] !== line) history.unshift(line);
  history.splice(HISTORY_SIZE);
}

// The raw keys of one keypress, as they came: the paste markers readline names but gives no sequence for.
function rawKey(sequence: string | undefined, key: { name?: string } | undefined): string {
  if (key?.name === 'paste-start') return PASTE_START;
  if (key?.name === 'paste-end') return PASTE_END;
  return sequence ?? '';
}

function readPromptLine(
  prompt: string,
  history: string[],
  ahead: TypedAhead,
  io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream; complete?: (line: string) => [string[], string] },
  events: {
    /** The line is open: `end` ends it (leave), `text` is what is typed on it now. */
    opened: (end: () => void, text: () => string) => void;
    /** The line ended; `unsent` is what was on it when it ended without sending it. */
    closed: (unsent: string) => void;
  },
): Promise<PromptAnswer> {
  const input = io.input ?? process.stdin;
  const output = io.output ?? process.stdout;
  // The last prompt's keys were all handled before this call (it follows their chunk): stop keeping.
  if (ahead.keep) input.off('keypress', ahead.keep);
  const queued = ahead.lines;
  const next = queued.shift();
  if (next !== undefined) {
    output.write(`${prompt}${next.split('\n').map(showControls).join('\n')}\n`);
    remember(history, next);
    return Promise.resolve({ line: next });
  }
  return new Promise((resolve) => {
    // Registered before the interface's own listener, so it sees each key first: the keys after
    // the line that answers (the rest of what was typed ahead) are kept, not lost with the interface;
    // and a pasted block is known as one before readline takes its line breaks for Enter.
    let done = false;
    let rest = '';
    // Inside a pasted block (the terminal brackets it): readline's lines are the block's, one message.
    let pasting = false;
    let pasted = '';
    // Each whole message at once: the next prompt may be asked for before this tick ends.
    const keep = (sequence?: string, key?: { name?: string }) => {
      if (!done) {
        if (key?.name === 'paste-start') pasting = true;
        else if (key?.name === 'paste-end') pasting = false;
        return;
      }
      const raw = rawKey(sequence, key);
      if (!raw) return;
      rest += raw;
      const lines = typedMessages(rest);
      rest = lines.pop()!;
      ahead.partial = rest;
      queued.push(...lines.filter((line) => line.trim() !== ''));
    };
    ahead.keep = keep;
    input.on('keypress', keep);
    // The terminal closed (its window shut): readline sends the line typed so far as if Enter had
    // been pressed. It was not: it is left unsent, and the prompt answers leave. Registered before
    // readline's own listener, so it is known first.
    let ended = false;
    const end = () => void (ended = true);
    input.once('end', end);
    const rl = createInterface({
      input,
      output,
      terminal: true,
      history: [...history],
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
      prompt,
      ...(io.complete ? { completer: io.complete } : {}),
    });
    const finish = (answer: PromptAnswer) => {
      if (done) return;
      done = true;
      input.off('end', end);
      events.closed('leave' in answer ? pasted + rl.line : '');
      // A message with a pasted block joins the history once, whole (readline noted each of its lines on its own).
      if (pasted && 'line' in answer) remember(history, answer.line);
      else history.splice(0, history.length, ...(rl as unknown as { history: string[] }).history);
      rl.close();
      // The rest of the chunk of keys is handled in this same tick: after it, the turn's own
      // questions read the keys, and they are theirs.
      setImmediate(() => input.off('keypress', keep));
      resolve(answer);
    };
    rl.on('line', (line) => {
      if (ended) return finish({ leave: true });
      if (!pasting) return finish({ line: pasted + line });
      // A line break of the pasted block: kept in the message, which Enter sends after the block.
      pasted += `${line}\n`;
    });
    rl.on('close', () => finish({ leave: true }));
    // A terminal that is gone fails readline's last change of its mode (EIO): the prompt leaves.
    rl.on('error', () => finish({ leave: true }));
    events.opened(
      () => finish({ leave: true }),
      () => pasted + rl.line,
    );
    rl.on('SIGINT', () => {
      if (rl.line.length === 0 && !pasted) {
        output.write('\n');
        return finish({ leave: true });
      }
      // The typed message is dropped (end of line, then delete to its start), as a shell drops it;
      // a second Ctrl-C leaves. Not lost: it joins the history, so the up arrow brings it back
      // (Ctrl-C is the copy key elsewhere; a long message cleared by that reflex is one key away).
      const cleared = pasted + rl.line;
      const lines = (rl as unknown as { history: string[] }).history;
      if (lines[0] !== cleared) lines.unshift(cleared);
      (rl as unknown as { historyIndex: number }).historyIndex = -1;
      pasted = '';
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
    });
    // The terminal brackets what is pasted from now on (a block of lines is one message); the
    // session turns it off when it ends. Kept on during a turn, so a block pasted then stays whole.
    output.write(BRACKETED_PASTE_ON);
    rl.prompt();
    // A message typed ahead without Enter is there to finish, as it was left (a pasted block whole).
    for (const part of splitPastes(ahead.partial)) {
      if (!part.pasted) {
        rl.write(typedText(part.text));
        continue;
      }
      pasting = true;
      rl.write(pastedText(part.text));
      // A block whose end has not come yet stays open until its marker does.
      pasting = Boolean(part.open);
    }
    ahead.partial = '';
  });
}
