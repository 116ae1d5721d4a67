// What `--push` tells the person at the terminal as the run goes (journal/pusher.ts): a remote that
// fails and is retried, a push git called failed that reached the remote, pushes landing again, and
// steps the run ended with that are not on the remote. The reasons quote git: control characters shown.
import { showControls } from '../../format/text.js';
import type { SessionEvent } from '../../session/index.js';

type PushSessionEvent = Extract<SessionEvent, { type: 'push-retrying' | 'push-reached' | 'push-caught-up' | 'push-behind' }>;

/** One line (a paragraph at most) for a push event. */
export function pushEventText(event: PushSessionEvent): string {
  const remote = showControls(event.remote);
  switch (event.type) {
    case 'push-retrying':
      return `Pushing the journal to ${remote} failed (${showControls(event.reason)}); the run goes on, and the push is tried again in ${seconds(event.waitMs)}${event.failingForMs ? ` (failing for ${seconds(event.failingForMs)})` : ''}.`;
    case 'push-reached':
      return `The push reached ${remote} but git reported a failure (${showControls(event.reported)}): ${remote} has the journal up to ${event.commit.slice(0, 12)}, so nothing is lost.`;
    case 'push-caught-up':
      return `Pushes to ${remote} land again (after ${event.failures} failed ${event.failures === 1 ? 'try' : 'tries'}).`;
    case 'push-behind':
      return `Not on ${remote}: ${describeUnpushed(event.unpushed)} (${showControls(event.reason)}). They are recorded here; push them later with: ${showControls(event.command)}`;
  }
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(ms < 10_000 ? 2 : 0))} s`;

// `#4`, `#5`, `run.json` -> "steps 4, 5 and the run's record (run.json)".
function describeUnpushed(names: string[]): string {
  const steps = names.filter((name) => name.startsWith('#')).map((name) => name.slice(1));
  const parts: string[] = [];
  if (steps.length) parts.push(`${steps.length === 1 ? 'step' : 'steps'} ${steps.join(', ')}`);
  if (names.includes('run.json')) parts.push("the run's record (run.json)");
  return parts.join(' and ');
}
