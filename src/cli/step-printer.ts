// The product's signature on screen: one line per step as it happens, REPLAYED (from journal) or
// LIVE (running now), what it did, a short result and how long it took, and at the end what the
// replay saved. Live model text streams in above its step line, so a call is never a silent pause.
import type { Writable } from 'node:stream';
import type { StepEvent } from '../durable/run-journal.js';
import { fit, formatCount, formatDuration, type Style } from './style.js';

export const REPLAYED_LABEL = 'REPLAYED (from journal)';
export const LIVE_LABEL = 'LIVE (running now)';

// What the replayed part of a run would have cost to do again.
export interface Savings {
  replayedSteps: number;
  modelCalls: number;
  tokens: number;
  commands: number;
  originalMs: number;
  replayMs: number;
  liveSteps: number;
}

export class StepPrinter {
  private readonly out: Writable;
  private readonly style: Style;
  private streaming = false;
  private thinking = false;
  private replayStarted: number | undefined;
  private replayEnded: number | undefined;
  readonly savings: Savings = { replayedSteps: 0, modelCalls: 0, tokens: 0, commands: 0, originalMs: 0, replayMs: 0, liveSteps: 0 };

  constructor(out: Writable, style: Style) {
    this.out = out;
    this.style = style;
  }

  // The journal's event hook.
  readonly onEvent = (event: StepEvent): void => {
    if (event.type === 'replayed') {
      this.replayStarted ??= performance.now();
      this.replayEnded = performance.now();
      this.tally(event.kind, event.result, event.originalDurationMs);
      const took = `${formatDuration(0)}${this.style.dim(` (took ${formatDuration(event.originalDurationMs)})`)}`;
      this.line(event.position, this.style.green(REPLAYED_LABEL), event.description, event.summary, took);
    } else if (event.type === 'recorded') {
      this.endText();
      this.savings.liveSteps++;
      const note = event.resolution === 'in-flight-reported' ? this.style.red(' (was in flight at the crash)') : '';
      this.line(event.position, this.style.yellow(LIVE_LABEL), event.description, event.summary + note, formatDuration(event.durationMs));
    } else if (event.type === 'in-flight') {
      this.out.write(
        this.style.red(`  #${event.position} ${event.description} was started before a crash and never recorded: `) +
          (event.decision === 'rerun' ? 'running it again\n' : 'telling the model its outcome is unknown\n'),
      );
    }
  };

  // Live extended thinking: dimmed, after a "thinking:" mark, apart from the answer's text.
  readonly onThinking = (text: string): void => {
    if (!text) return;
    if (!this.thinking) {
      this.endText();
      this.out.write(`      ${this.style.dim('thinking: ')}`);
      this.streaming = true;
      this.thinking = true;
    }
    this.out.write(this.style.dim(text.replace(/\n/g, '\n      ')));
  };

  // Live model text, streamed as it arrives, indented under the steps.
  readonly onText = (text: string): void => {
    if (!text) return;
    if (this.thinking) this.endText();
    if (!this.streaming) {
      this.out.write('      ');
      this.streaming = true;
    }
    this.out.write(this.style.dim(text.replace(/\n/g, '\n      ')));
  };

  private endText(): void {
    if (this.streaming) this.out.write('\n');
    this.streaming = false;
    this.thinking = false;
  }

  private tally(kind: string, result: unknown, originalMs: number): void {
    const s = this.savings;
    s.replayedSteps++;
    s.originalMs += originalMs;
    s.replayMs = (this.replayEnded ?? 0) - (this.replayStarted ?? 0);
    if (kind === 'model' || kind === 'compact') {
      s.modelCalls++;
      const usage = (result as { usage?: { inputTokens?: number; outputTokens?: number } } | undefined)?.usage;
      s.tokens += (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
    } else if (kind === 'run_bash') {
      s.commands++;
    }
  }

  private line(position: number, label: string, description: string, summary: string, time: string): void {
    const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
    const labelWidth = REPLAYED_LABEL.length;
    const room = Math.max(30, this.style.width - (4 + 2 + labelWidth + 2) - 25 - 3); // time column: up to ~22 characters
    const whatWidth = Math.min(34, Math.max(16, Math.floor(room * 0.5)));
    const what = fit(description, whatWidth).padEnd(whatWidth);
    const result = fit(summary, room - whatWidth);
    const paddedLabel = label + ' '.repeat(Math.max(0, labelWidth - plain(label).length));
    this.out.write(`${`#${position}`.padStart(4)}  ${paddedLabel}  ${this.style.bold(what)} ${this.style.dim('→')} ${result}  ${this.style.dim('·')} ${time}\n`);
  }

  // One paragraph on what replay saved, or nothing when nothing replayed.
  summary(): string {
    const s = this.savings;
    if (s.replayedSteps === 0) return '';
    const parts = [`${s.modelCalls} model call${s.modelCalls === 1 ? '' : 's'}`];
    if (s.tokens) parts.push(`${formatCount(s.tokens)} tokens`);
    parts.push(`${s.commands} command${s.commands === 1 ? '' : 's'}`);
    return (
      `Replayed ${s.replayedSteps} step${s.replayedSteps === 1 ? '' : 's'} from the journal in ${formatDuration(s.replayMs)} ` +
      `instead of ${formatDuration(s.originalMs)}: ${parts.join(', ')} not re-run; ${s.liveSteps} step${s.liveSteps === 1 ? '' : 's'} ran live.`
    );
  }
}
