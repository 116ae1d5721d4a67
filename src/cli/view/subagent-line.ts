// A subagent's step as the parent's terminal shows it: one indented line per finished step, named
// by the subagent's description, under the parent's task step that started it. Its steps'
// durations are its own; its text is not streamed (several subagents answer at once).
import { formatDuration } from '../../format/numbers.js';
import { ellipsize, showControls } from '../../format/text.js';
import type { SessionEvent } from '../../session/types.js';
import { SHORT_LABELS } from './step-printer.js';

type SubagentEvent = Extract<SessionEvent, { type: 'subagent' }>;

/** The line of a subagent's step, or undefined for an event that prints none (a step starting). */
export function subagentLine(event: SubagentEvent, width: number): string | undefined {
  const step = event.event;
  const who = `  [#${event.parentStep} ${ellipsize(event.description.replace(/\s+/g, ' '), 24)}]`;
  let text: string;
  if (step.type === 'replayed') text = `${who} #${step.position} ${SHORT_LABELS.replayed} ${step.description} -> ${step.summary}`;
  else if (step.type === 'recorded')
    text = `${who} #${step.position} ${step.resolution ? SHORT_LABELS.notRun : SHORT_LABELS.live} ${step.description} -> ${step.summary} (${formatDuration(step.durationMs)})`;
  else if (step.type === 'in-flight')
    text = `${who} #${step.position} in flight at a crash: ${step.description} (${step.decision === 'rerun' ? 'running it again' : 'the model is told'})`;
  else if (step.type === 'orphan') text = `${who} a command left running by the killed attempt was stopped: ${step.description}`;
  else return undefined;
  return ellipsize(showControls(text), Math.max(20, width));
}

/** The JSON Lines event of a subagent's step (`subagent-step`): who, and the step as the parent's own are told, without its whole result. */
export function subagentJson(event: SubagentEvent): Record<string, unknown> | undefined {
  const step = event.event;
  if (step.type === 'started' || step.type === 'orphan') return undefined;
  const { result: _result, ...fields } = step as typeof step & { result?: unknown };
  return { run: event.run, parentStep: event.parentStep, description: event.description, step: fields };
}
