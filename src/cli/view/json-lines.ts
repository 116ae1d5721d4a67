// `--json` on `run`, `resume` and `continue`: JSON Lines on stdout, one object per session event,
// each with `type` and `time` (ISO 8601). docs/json-events.md is the contract:
// fields are only ever added, never renamed or removed. An event type this file does not know
// (`compaction`, emitted by the session) goes out with its own fields as they are.
import type { Writable } from 'node:stream';
import { isSavepointError } from '../../errors/index.js';
import type { RunOutcome, SessionEvent } from '../../session/index.js';
import type { RunTally } from './run-tally.js';
import { terminalJson } from '../../format/text.js';
import { subagentJson } from './subagent-line.js';

/** The `type` of every line `--json` prints. */
export const JSON_EVENT_TYPES = [
  'run-started',
  'instructions-left-out',
  'fenced',
  'sandbox',
  'step-replayed',
  'step-started',
  'step-recorded',
  'step-in-flight',
  'output',
  'text',
  'worktree-restored',
  'worktree-kept',
  'new-run-for-task',
  'finished-over-changes',
  'compaction',
  'model-notice',
  'mcp-unavailable',
  'push-retrying',
  'push-reached',
  'push-caught-up',
  'push-behind',
  'final',
  'savings',
  'summary',
  'error',
] as const;

/** Writes one JSON line per event to `out`. */
export class JsonLines {
  private readonly out: Writable;

  constructor(out: Writable) {
    this.out = out;
  }

  /** One line: `{"type":..., "time":..., ...fields}`. */
  write(type: string, fields: Record<string, unknown>): void {
    this.out.write(`${terminalJson({ type, time: new Date().toISOString(), ...fields })}\n`);
  }

  /** A session event as its JSON line. */
  event(event: SessionEvent): void {
    switch (event.type) {
      case 'opened': {
        const { type: _type, ...fields } = event;
        return this.write('run-started', fields);
      }
      case 'replayed':
        return this.write('step-replayed', {
          position: event.position,
          kind: event.kind,
          description: event.description,
          summary: event.summary,
          originalDurationMs: event.originalDurationMs,
          ...usageOf(event.kind, event.result),
          note: noteOf(event.result),
        });
      case 'started':
        return this.write('step-started', { position: event.position, kind: event.kind, description: event.description });
      case 'recorded':
        return this.write('step-recorded', {
          position: event.position,
          kind: event.kind,
          description: event.description,
          summary: event.summary,
          durationMs: event.durationMs,
          resolution: event.resolution ?? null,
          isError: isErrorOf(event.result),
          ...usageOf(event.kind, event.result),
          note: noteOf(event.result),
        });
      case 'in-flight': {
        const { type: _type, ...fields } = event;
        return this.write('step-in-flight', fields);
      }
      case 'subagent': {
        const fields = subagentJson(event);
        return fields ? this.write('subagent-step', fields) : undefined;
      }
      default: {
        const { type, ...fields } = event as { type: string } & Record<string, unknown>;
        return this.write(type, fields);
      }
    }
  }

  /** How the run ended, what replay saved, and the run's tokens, cost and time. */
  end(outcome: RunOutcome, tally: RunTally): void {
    // changedSince: a finished run replayed over files that differ from its last checkpoint ([] when they do not).
    const changedSince =
      outcome.status === 'finished' ? { changedSince: (outcome.changedSince ?? []).map(({ path, change }) => ({ path, change })) } : {};
    this.write('final', { run: outcome.run, status: outcome.status, final: outcome.final, steps: outcome.steps, ...changedSince });
    this.write('savings', { ...tally.savings() });
    this.write('summary', { ...tally.get() });
  }

  /** An error that stopped the run; the exit code is the usual one. */
  error(error: unknown): void {
    const code = isSavepointError(error) ? error.code : 'EUNEXPECTED';
    this.write('error', { code, message: error instanceof Error ? error.message : String(error) });
  }
}

// Whether a tool step's result is an error (null for steps that are not tool calls: model, user).
function isErrorOf(result: unknown): boolean | null {
  const value = (result as { isError?: unknown } | undefined)?.isError;
  return typeof value === 'boolean' ? value : null;
}

// A model step's tokens, as `usage` (null for every other kind).
function usageOf(kind: string, result: unknown): { usage: unknown } {
  return { usage: kind === 'model' ? ((result as { usage?: unknown } | undefined)?.usage ?? null) : null };
}

// A tool step's note (a sandbox boundary its command hit), else null.
function noteOf(result: unknown): string | null {
  const note = (result as { note?: unknown } | null | undefined)?.note;
  return typeof note === 'string' && note ? note : null;
}
