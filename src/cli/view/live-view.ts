// The live view of a step that is running, on a terminal only: a spinner with the step and its
// elapsed time, and for a command the last few lines of its output, dimmed, redrawn in place under
// the step lines. Everything the run prints goes through `out`, which erases the block first and
// draws it again after, so the block never mixes with a step line. Off a terminal it does nothing
// and `out` is the stream itself.
import { Writable } from 'node:stream';
import { formatDuration } from '../../format/numbers.js';
import { displayWidth, fitColumns, showControls } from '../../format/text.js';
import type { Style } from '../terminal/style.js';

type Out = Writable & { isTTY?: boolean; columns?: number };

const FRAMES = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
/** How many lines of a command's output the view keeps on screen. */
export const OUTPUT_LINES = 4;
// How much of one line of output the view keeps: far more than a terminal is wide.
const PARTIAL_CHARS = 8192;

interface Block {
  what: string;
  doing: string;
  started: number;
  tail: string[];
  partial: string;
  /** While the model service is busy: when savepoint asks it again (performance.now() time). */
  retryAt?: number;
}

/** A redrawn-in-place block for the step in progress. */
export class LiveView {
  /** Where the run prints: the block is erased before and drawn again after each write. */
  readonly out: Out;
  private readonly real: Out;
  private readonly style: Style;
  private readonly enabled: boolean;
  private block: Block | undefined;
  private drawn = 0;
  private atLineStart = true;
  private paused = false;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(real: Out, style: Style, enabled: boolean) {
    this.real = real;
    this.style = style;
    this.enabled = enabled;
    if (!enabled) {
      this.out = real;
      return;
    }
    const view = this;
    this.out = Object.assign(
      new Writable({
        write(chunk: Buffer | string, _encoding, callback) {
          view.print(chunk.toString());
          callback();
        },
      }),
      { isTTY: real.isTTY, columns: real.columns },
    );
  }

  /** A step went live: show that it is working. */
  begin(description: string, kind: string): void {
    if (!this.enabled) return;
    this.block = {
      what: showControls(description),
      doing: kind === 'model' ? 'waiting for the model' : kind === 'run_bash' ? 'running' : 'working',
      started: performance.now(),
      tail: [],
      partial: '',
    };
    this.timer ??= setInterval(() => this.redraw(), 120).unref();
    this.redraw();
  }

  /** The model service asked for a wait: count it down in place of "waiting for the model". */
  countdown(seconds: number): void {
    if (!this.block) return;
    this.block.retryAt = performance.now() + seconds * 1000;
    this.redraw();
  }

  /**
   * A chunk of the running command's output. A carriage return starts its line again (a progress
   * bar shows its last state); every other control character is made visible (showControls), as
   * in every printer of outside text, so the command's escapes (a clipboard write, a title, cursor
   * movement) never reach the terminal. The line still being written is kept as it came, so an
   * escape split between two chunks is shown whole.
   */
  output(chunk: string): void {
    const block = this.block;
    if (!block) return;
    const lines = (block.partial + chunk).split('\n').map((line) => line.slice(line.lastIndexOf('\r') + 1));
    // A line with no end in sight (megabytes without a newline) keeps only what a screen could show.
    block.partial = (lines.pop() ?? '').slice(0, PARTIAL_CHARS);
    block.tail = [...block.tail, ...lines.map((line) => showControls(line.slice(0, PARTIAL_CHARS)))].slice(-OUTPUT_LINES);
    this.redraw();
  }

  /** The step ended (recorded, or stopped): take the block away. */
  end(): void {
    this.erase();
    this.block = undefined;
  }

  /** Takes the block away while a question is asked; `resume` brings it back. */
  pause(): void {
    this.erase();
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.redraw();
  }

  /** Stops the timer and erases the block. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.end();
  }

  private print(text: string): void {
    if (!text) return;
    this.erase();
    this.real.write(text);
    this.atLineStart = text.endsWith('\n');
    this.redraw();
  }

  private redraw(): void {
    this.erase();
    const block = this.block;
    if (!block || this.paused || !this.atLineStart) return;
    // The real width, even below the style's floor: a wrapped line would break the redraw.
    const width = Math.min(this.style.width, this.real.columns || this.style.width);
    const shown = [...block.tail, ...(block.partial ? [showControls(block.partial)] : [])].slice(-OUTPUT_LINES);
    const lines = shown.map((line) => this.style.dim(`      │ ${fitColumns(line, width - 10)}`));
    this.frame = (this.frame + 1) % FRAMES.length;
    const now = performance.now();
    const elapsed = formatDuration(now - block.started);
    const left = block.retryAt === undefined ? 0 : Math.ceil((block.retryAt - now) / 1000);
    const doing = left > 0 ? `the service is busy: asking again in ${left} s` : block.doing;
    // The line fits the width whole (a wrapped one would break the redraw): the step's name gives way first, then what it is doing.
    const state = fitColumns(`· ${doing} · ${elapsed}`, Math.max(1, width - 9));
    const what = fitColumns(block.what, Math.min(width - 48, width - 10 - displayWidth(state)));
    lines.push(`      ${this.style.cyan(FRAMES[this.frame]!)} ${what ? `${what} ` : ''}${this.style.dim(state)}`);
    this.real.write(lines.join('\n'));
    this.drawn = lines.length;
  }

  private erase(): void {
    if (this.drawn === 0) return;
    this.real.write(`\r${this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : ''}\x1b[J`);
    this.drawn = 0;
  }
}
