// commander's parse errors (a missing argument, an unknown option or command) as savepoint's own
// usage paragraph: what was wrong, the command's usage line, an example, and where --help is.
// Exit code 2, like every UsageError.
import type { Command, CommanderError } from 'commander';
import { UsageError } from '../errors/index.js';

// commander's codes for errors a person made typing the command.
const USAGE_CODES = new Set([
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.conflictingOption',
  'commander.unknownOption',
  'commander.excessArguments',
  'commander.unknownCommand',
  'commander.invalidArgument',
]);

// One example per command, for the paragraph (the --help text has more).
const EXAMPLES: Record<string, string> = {
  run: 'savepoint run "make the failing test pass"',
  resume: 'savepoint resume fix-login-3a4b5c',
  fork: 'savepoint fork fix-login-3a4b5c --at 7',
  log: 'savepoint log fix-login-3a4b5c',
  show: 'savepoint show fix-login-3a4b5c 4',
};

/** The UsageError for a commander parse error of `command`, or undefined for other outcomes (help, version). */
export function usageErrorFrom(error: CommanderError, command: Command): UsageError | undefined {
  if (!USAGE_CODES.has(error.code)) return undefined;
  const what = suggestionTold(error.message.replace(/^error: /, '').replace(/\.$/, ''));
  const name = commandPath(command);
  const example = EXAMPLES[command.name()];
  const usage = `Usage: ${name} ${command.usage()}${example ? `, for example ${example}` : ''}.`;
  return new UsageError(`${what}${what.endsWith('?') ? '' : '.'} ${usage} "${name} --help" lists the options, examples and exit codes.`);
}

/** Makes `command` (and nothing else) report its parse errors as savepoint usage paragraphs. */
export function useSavepointUsageErrors(command: Command): void {
  command.configureOutput({ outputError: () => {} }).exitOverride((error) => {
    throw usageErrorFrom(error, command) ?? error;
  });
}

// commander's "unknown command 'rn'\n(Did you mean run?)" as one sentence ("unknown command 'rn':
// did you mean run?"), without a suggestion that is only the start of the word typed ('login' is not 'log').
function suggestionTold(what: string): string {
  const match = /^(unknown command '([^']*)')\s*\(Did you mean ([^?]+)\?\)$/s.exec(what);
  if (!match) return what.replace(/\s*\n\s*/g, ' ');
  const [, head, typed, suggested] = match as unknown as [string, string, string, string];
  return typed.startsWith(suggested) ? head : `${head}: did you mean ${suggested}?`;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
