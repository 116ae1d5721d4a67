// The product's signature on screen: one line per step as it happens, REPLAYED (from journal) or
// LIVE (running now), what it did, a short result and how long it took (what the replay saved is
// counted in run-tally.ts). Live model text streams in above its step line, so a call is never a
// silent pause.
// Every line fits the style's width: below WIDE_COLUMNS the labels lose their parenthesis and a
// replayed step shows only its original time; descriptions and results are cut by characters.
// Tested in test/cli/step-printer.test.ts.
import type { Writable } from 'node:stream';
import type { StepEvent } from '../../valve/run-journal.js';
import { formatDuration } from '../../format/numbers.js';
import { chunkColumns, displayWidth, ellipsize, fitColumns, showControls, wrapWords } from '../../format/text.js';
import { padVisible, visibleLength } from './run-format.js';
import type { Style } from '../terminal/style.js';

/** The label of a step handed back from the journal. */
export const REPLAYED_LABEL = 'REPLAYED (from journal)';
/** The label of a step that ran now. */
export const LIVE_LABEL = 'LIVE (running now)';
/** The labels on a terminal narrower than WIDE_COLUMNS. */
export const SHORT_LABELS = { replayed: 'REPLAYED', live: 'LIVE', notRun: 'NOT RUN', declined: 'DECLINED' } as const;
/** The narrowest width that shows the full labels. */
export const WIDE_COLUMNS = 100;
// The room the time column is sized for: `0 ms (took 1.4 s)` on a wide screen, `took 120 ms` else.
const TIME_ROOM = { wide: 22, narrow: 11 };
// Model text streams in under the steps, indented this much.
const TEXT_INDENT = '      ';
/** Steps recorded without running: not LIVE, since nothing ran. */
export const NOT_RUN_LABEL = 'NOT RUN (was in flight)';
/** The label of a step the user declined: recorded, not run. */
export const DECLINED_LABEL = 'DECLINED (not run)';

/** Prints a run's steps and its streamed model text, to fit `style.width`. */
export class StepPrinter {
  private readonly out: Writable;
  private readonly style: Style;
  // Live text is streamed as it comes (a terminal); else each model turn's text is one line.
  private readonly stream: boolean;
  // The text streamed during the model step in progress, and during the live model steps since the
  // last step of any other kind or turn that called tools (an answer cut off at max_tokens goes on
  // in the next turn): a final answer streamed in full is not printed again.
  private streamedNow = '';
  private streamedLast = '';
  private streaming = false;
  // The visible column of streamed text, the word it has not printed yet, and whether a space
  // goes before that word (dropped when the word starts a new line).
  private column = 0;
  private word = '';
  private space = false;
  private thinking = false;
  /** The model turns that went live and were recorded (a compaction is not one): whether this attempt's model said anything new. */
  liveModelTurns = 0;

  /** `stream: false` (a pipe, a log): no text as it arrives; each model turn's text is shown as one line above its step line, as a replayed turn's is. */
  constructor(out: Writable, style: Style, options: { stream?: boolean } = {}) {
    this.out = out;
    this.style = style;
    this.stream = options.stream ?? true;
  }

  /** Whether `final` is the text this printer streamed, in full, for the last step (a live model turn): it is on the screen already. */
  streamedAnswer(final: string): boolean {
    const text = this.streamedLast.trim();
    return text !== '' && text === final.trim();
  }

  /** The journal's event hook. */
  readonly onEvent = (event: StepEvent): void => {
    if (event.type === 'replayed') {
      this.streamedLast = '';
      if (event.kind === 'model') this.said(event.result);
      const took = this.wide
        ? `${formatDuration(0)}${this.style.dim(` (took ${formatDuration(event.originalDurationMs)})`)}`
        : this.style.dim(`took ${formatDuration(event.originalDurationMs)}`);
      this.line(
        event.position,
        this.style.green(this.wide ? REPLAYED_LABEL : SHORT_LABELS.replayed),
        event.description,
        event.summary,
        took,
        noteOf(event.result),
      );
    } else if (event.type === 'recorded') {
      this.endText();
      this.streamedLast = event.kind === 'model' && !callsTools(event.result) ? this.streamedLast + this.streamedNow : '';
      this.streamedNow = '';
      if (event.kind === 'model') this.liveModelTurns++;
      if (event.kind === 'model' && !this.stream) this.said(event.result);
      const label =
        event.resolution === 'in-flight-reported'
          ? this.style.red(this.wide ? NOT_RUN_LABEL : SHORT_LABELS.notRun)
          : event.resolution === 'declined'
            ? this.style.red(this.wide ? DECLINED_LABEL : SHORT_LABELS.declined)
            : this.style.yellow(this.wide ? LIVE_LABEL : SHORT_LABELS.live);
      this.line(
        event.position,
        label,
        event.description,
        event.resolution === 'declined' ? declinedSummary(event.summary) : event.summary,
        formatDuration(event.durationMs),
        noteOf(event.result),
      );
    } else if (event.type === 'in-flight') {
      this.endText();
      const what = `#${event.position} ${showControls(event.description)} was ${event.interrupted ? 'interrupted by a signal before its result was recorded' : 'started before a crash and never recorded'}: `;
      const then = event.decision === 'rerun' ? 'running it again' : 'telling the model its outcome is unknown';
      if (displayWidth(what + then) <= this.style.width - 2) this.out.write(`${this.style.red(`  ${what}`)}${then}\n`);
      else
        this.out.write(
          `${wrapWords(what + then, this.style.width - 2, 'columns')
            .map((line) => this.style.red(`  ${line}`))
            .join('\n')}\n`,
        );
    } else if (event.type === 'orphan') {
      this.endText();
      const how = {
        stopped: 'stopped it (SIGTERM)',
        killed: 'killed it (SIGKILL)',
        unreachable: 'it was started on another machine or in another container, so it could not be stopped from here',
      }[event.outcome];
      const what = `#${event.position} ${showControls(event.description)}, started by the crashed attempt at ${event.startedAt}, was still running (process group ${event.pgid}): `;
      this.out.write(`${this.style.red(`  ${what}`)}${how}\n`);
    }
  };

  // Live extended thinking: dimmed, after a "thinking:" mark, apart from the answer's text.
  readonly onThinking = (streamed: string): void => {
    if (!streamed || !this.stream) return;
    const text = showControls(streamed);
    if (!this.thinking) {
      this.endText();
      this.out.write(`      ${this.style.dim('thinking: ')}`);
      this.streaming = true;
      this.thinking = true;
    }
    this.out.write(this.style.dim(text.replace(/\n/g, '\n      ')));
  };

  /** Live model text, streamed as it arrives, indented under the steps and word-wrapped to the width. */
  readonly onText = (streamed: string): void => {
    if (!streamed || !this.stream) return;
    this.streamedNow += streamed;
    // The model's text is outside text: shown, never obeyed by the terminal.
    const text = showControls(streamed);
    if (this.thinking) this.endText();
    if (!this.streaming) {
      this.out.write(TEXT_INDENT);
      this.column = TEXT_INDENT.length;
      this.streaming = true;
    }
    let shown = '';
    for (const piece of text.split(/(\s)/)) {
      if (piece === '\n') {
        shown += `${this.takeWord()}\n${TEXT_INDENT}`;
        this.column = TEXT_INDENT.length;
        this.space = false;
      } else if (/^\s$/.test(piece)) {
        shown += this.takeWord();
        this.space = true;
      } else {
        this.word += piece;
        // A word longer than a whole line is broken where the line ends.
        if (TEXT_INDENT.length + displayWidth(this.word) > this.style.width) shown += this.breakWord();
      }
    }
    // Shown now if it fits where it is (the model may pause mid-sentence); the rest of the word, if
    // more comes, follows it or wraps.
    if (this.word && this.column + (this.space ? 1 : 0) + displayWidth(this.word) <= this.style.width) shown += this.takeWord();
    // In the terminal's own colour, not dimmed: it may be the final answer, printed only here.
    if (shown) this.out.write(shown);
  };

  // What a model turn thought and said, one line each above its step line (a replayed turn, or any
  // turn off a terminal): whitespace folded, controls shown, cut to the width. A turn's text is
  // shown when it called tools: a turn that only answers is the final answer (or part of it),
  // printed in full under "Final answer".
  private said(result: unknown): void {
    const content = (result as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return;
    const of = (type: 'text' | 'thinking') =>
      content
        .map((block) => (block as Record<string, unknown>) ?? {})
        .filter((block) => block.type === type && typeof block[type] === 'string')
        .map((block) => block[type] as string)
        .join(' ');
    const room = this.style.width - TEXT_INDENT.length;
    const thought = fitColumns(showControls(of('thinking')), room - 'thinking: '.length);
    if (thought) this.out.write(`${TEXT_INDENT}${this.style.dim(`thinking: ${thought}`)}\n`);
    const line = callsTools(result) ? fitColumns(showControls(of('text')), room) : '';
    if (line) this.out.write(`${TEXT_INDENT}${this.style.dim(line)}\n`);
  }

  private get wide(): boolean {
    return this.style.width >= WIDE_COLUMNS;
  }

  // The pending word (after its space), on a new line first when it does not fit on this one.
  private takeWord(): string {
    if (!this.word) return '';
    const gap = this.space && this.column > TEXT_INDENT.length ? ' ' : '';
    const length = displayWidth(this.word);
    const wrap = this.column > TEXT_INDENT.length && this.column + gap.length + length > this.style.width;
    const text = wrap ? `\n${TEXT_INDENT}${this.word}` : `${gap}${this.word}`;
    this.column = (wrap ? TEXT_INDENT.length : this.column + gap.length) + length;
    this.word = '';
    this.space = false;
    return text;
  }

  // The whole lines' worth of an over-long pending word, each on a line of its own; what is left
  // (shorter than a line) stays pending. One pass over the word: a megabyte-long word is linear.
  private breakWord(): string {
    const lines = chunkColumns(this.word, this.style.width - TEXT_INDENT.length);
    this.word = lines.pop() ?? '';
    const text = `${this.column > TEXT_INDENT.length ? `\n${TEXT_INDENT}` : ''}${lines.map((line) => `${line}\n${TEXT_INDENT}`).join('')}`;
    this.column = TEXT_INDENT.length;
    this.space = false;
    return text;
  }

  private endText(): void {
    if (this.streaming) {
      const rest = this.takeWord();
      this.out.write(`${rest}\n`);
    }
    this.streaming = false;
    this.thinking = false;
  }

  // `#4  REPLAYED  read_file a.txt → 12 lines  · took 3 ms`, cut to the width. The description
  // column is as wide on every line (sized for a typical time), and a longer time takes its room
  // from the result. `note` follows the result in red, with what room the result leaves.
  private line(position: number, label: string, recordedDescription: string, recordedSummary: string, time: string, note = ''): void {
    // A description and a result name files, commands and their output: outside text.
    const [description, summary] = [showControls(recordedDescription), showControls(recordedSummary)];
    const labelWidth = this.wide ? REPLAYED_LABEL.length : SHORT_LABELS.replayed.length;
    const number = `#${position}`.padStart(4);
    const fixed = displayWidth(number) + 2 + labelWidth + 2 + 3 + 4; // `  `, `  `, ` → `, `  · `
    const whatWidth = Math.min(34, Math.floor(Math.max(8, this.style.width - fixed - (this.wide ? TIME_ROOM.wide : TIME_ROOM.narrow)) / 2));
    const what = padVisible(fitColumns(description, whatWidth), whatWidth);
    const resultRoom = Math.max(1, this.style.width - fixed - whatWidth - visibleLength(time));
    const summaryText = fitColumns(
      summary,
      note ? Math.max(Math.ceil(resultRoom / 2), resultRoom - displayWidth(showControls(note))) : resultRoom,
    );
    const noteText = ellipsize(showControls(note), resultRoom - displayWidth(summaryText), 'columns');
    const result = summaryText + (noteText ? this.style.red(noteText) : '');
    this.out.write(
      `${number}  ${padVisible(label, labelWidth)}  ${this.style.bold(what)} ${this.style.dim('→')} ${result}  ${this.style.dim('·')} ${time}\n`,
    );
  }
}

// A tool result's note for the step line (a sandbox boundary the command hit), after the result.
function noteOf(result: unknown): string {
  const note = (result as { note?: unknown } | null | undefined)?.note;
  return typeof note === 'string' && note ? ` (${note})` : '';
}

// A declined step's result beside its DECLINED label, which already says it was declined: the
// person's reason ("reason: use pnpm"), or that none was given; a deny rule's summary as it is.
function declinedSummary(summary: string): string {
  if (summary.startsWith('declined: ')) return `reason: ${summary.slice('declined: '.length)}`;
  if (summary === 'declined by the user') return 'no reason given';
  return summary;
}

// Whether a model step's result (its response) calls a tool.
function callsTools(result: unknown): boolean {
  const content = (result as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) && content.some((block) => (block as { type?: unknown })?.type === 'tool_use');
}
