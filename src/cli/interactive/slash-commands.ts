// The slash commands of an interactive session, parsed: a line that starts with "/" is one of
// these or an unknown one (answered in one line); any other line, and any message of several
// lines (a pasted block), is a message for the agent.
// Tested in test/cli/turn-keys.test.ts.

/** One parsed line of the prompt. */
export type PromptLine =
  | { type: 'message'; text: string }
  | { type: 'help' | 'exit' | 'cost' | 'diff' | 'runs' | 'compact' | 'new' }
  | { type: 'model'; model?: string }
  | { type: 'fork'; step?: number; bad?: string }
  | { type: 'unknown'; name: string };

/** The slash commands and what each does, for /help. */
export const SLASH_COMMANDS: ReadonlyArray<[usage: string, what: string]> = [
  ['/help', 'this list'],
  ['/exit', 'leave the session (Ctrl-D, or Ctrl-C at an empty prompt, too)'],
  ['/model <id>', 'use this model from the next turn on (a journaled config step); /model alone names the one in use'],
  ['/cost', "the run's tokens, model calls and estimated cost so far, and what this session made live"],
  ['/diff', 'what the run changed in total (savepoint diff)'],
  ['/runs', "this worktree's runs (savepoint runs)"],
  ['/fork <step>', "a new run with this run's steps before <step>; the session goes on with it"],
  ['/compact', 'summarize the conversation now (a journaled step): later turns send the summary and the recent turns'],
  ['/new', 'the next message starts a new run'],
];

/** What `line` asks for. A message of several lines (a pasted block) is a message, even one that starts with "/" (a path, an error). */
export function parsePromptLine(line: string): PromptLine {
  const text = line.trim();
  if (text.includes('\n')) return { type: 'message', text };
  if (!text.startsWith('/') || text.startsWith('//')) return { type: 'message', text: text.startsWith('//') ? text.slice(1) : text };
  const [name = '', ...rest] = text.slice(1).split(/\s+/);
  const arg = rest.join(' ').trim();
  switch (name) {
    case 'help':
    case '?':
      return { type: 'help' };
    case 'exit':
    case 'quit':
      return { type: 'exit' };
    case 'cost':
    case 'diff':
    case 'runs':
    case 'compact':
    case 'new':
      return { type: name };
    case 'model':
      return arg ? { type: 'model', model: arg } : { type: 'model' };
    case 'fork': {
      const step = Number(arg);
      return Number.isInteger(step) && step >= 1 ? { type: 'fork', step } : { type: 'fork', bad: arg };
    }
    default:
      // A name added above joins BUILT_IN_NAMES (view/session-settings.ts): a custom command never takes it.
      return { type: 'unknown', name };
  }
}
