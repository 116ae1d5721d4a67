// The keys pressed while a session's turn runs. Esc stops the turn as Ctrl-C does, so the terminal
// is read in raw mode during the turn (its normal mode would hold an Esc until Enter): a lone ESC is
// Esc only after a short quiet gap with no byte after it, as readline tells it apart, because the
// keys that edit a line (arrows, Home, F-keys, Alt-letters) send ESC followed by more bytes, and a
// pasted block (bracketed, ESC[200~ … ESC[201~) is text whatever it holds. Ctrl-C is what the
// terminal would have made of it: SIGINT to this process. Every other key is typed ahead: handed
// to the session's prompt, whose next lines they are, as they were before.
// Tested in test/cli/turn-keys.test.ts.
import { PASTE_END, PASTE_START } from '../terminal/typed-ahead.js';

/** How long after a lone ESC no byte may come for it to be Esc (readline waits 500 ms for the rest of a sequence; a terminal sends a key's bytes at once). */
export const ESC_QUIET_MS = 100;

/** What the keys of a turn do: Esc stops it; the rest are typed ahead. */
export interface TurnKeyActions {
  /** Esc: stop the turn (called once per turn). */
  stop: () => void;
  /** Keys typed during the turn, as they came (Ctrl-C and a lone Esc taken out). */
  typed: (keys: string) => void;
}

/** Reads the terminal in raw mode while a turn runs; paused while a question of the turn reads it. */
export class TurnKeys {
  private reading = false;
  private stopped = false;
  private pasting = false;
  private heldEsc: NodeJS.Timeout | undefined;
  private readonly decoder = new TextDecoder();
  private readonly onData = (chunk: Buffer | string) =>
    this.take(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));

  /** Keys read from `input` (this process's terminal by default). */
  constructor(
    private readonly actions: TurnKeyActions,
    private readonly input: NodeJS.ReadStream = process.stdin,
  ) {}

  /** Starts (or goes on) reading the keys: the turn runs. Nothing on a stream that is not a terminal. */
  resume(): void {
    if (this.reading || !this.input.isTTY || typeof this.input.setRawMode !== 'function') return;
    this.reading = true;
    this.input.setRawMode(true);
    this.input.on('data', this.onData);
    this.input.resume();
  }

  /** Stops reading, the terminal back in its normal mode: a question reads it now, or the turn ended. A held ESC that had no time to be Esc is typed ahead. */
  pause(): void {
    if (!this.reading) return;
    this.reading = false;
    this.input.off('data', this.onData);
    this.input.pause();
    this.input.setRawMode(false);
    if (this.heldEsc) {
      clearTimeout(this.heldEsc);
      this.heldEsc = undefined;
      this.actions.typed('\x1b');
    }
  }

  // One chunk of keys, as the terminal sent them.
  private take(keys: string): void {
    if (this.heldEsc) {
      // More came right after the ESC: it began a key's sequence (or Alt with a key), not Esc.
      clearTimeout(this.heldEsc);
      this.heldEsc = undefined;
      keys = `\x1b${keys}`;
    }
    let typed = '';
    for (let i = 0; i < keys.length;) {
      if (keys.startsWith(PASTE_START, i) || keys.startsWith(PASTE_END, i)) {
        const marker = keys.startsWith(PASTE_START, i) ? PASTE_START : PASTE_END;
        this.pasting = marker === PASTE_START;
        typed += marker;
        i += marker.length;
        continue;
      }
      const char = keys[i]!;
      i++;
      if (this.pasting) typed += char;
      else if (char === '\x03') {
        // Ctrl-C, as the terminal's normal mode makes it: SIGINT (what was typed ahead goes with it).
        this.actions.typed(typed);
        typed = '';
        process.kill(process.pid, 'SIGINT');
      } else if (char === '\x1b' && i === keys.length) {
        // A lone ESC at the end of what came: Esc, unless more comes within the quiet gap.
        this.heldEsc = setTimeout(() => this.esc(), ESC_QUIET_MS);
      } else typed += char;
    }
    if (typed) this.actions.typed(typed);
  }

  private esc(): void {
    this.heldEsc = undefined;
    if (this.stopped) return; // a second Esc: the turn is stopping already
    this.stopped = true;
    this.actions.stop();
  }
}
