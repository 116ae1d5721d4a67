// Options shared by the commands that drive a run (`run`, `resume`, `continue`).
import { Option, type Command } from 'commander';
import { IN_FLIGHT_POLICIES, type InFlightPolicy } from '../../agent/in-flight.js';
import { UsageError } from '../../errors/index.js';
import type { SessionOptions } from '../../session/types.js';
import { splitRuleList } from '../../settings/index.js';

/**
 * The flags of a command that drives a run, as commander parses them: the limits and pinned
 * settings go to the session as they are (SessionOptions documents them); the rest are mapped.
 */
export interface DriveFlags extends Pick<
  SessionOptions,
  | 'model'
  | 'maxSteps'
  | 'maxTurns'
  | 'maxCost'
  | 'maxTokens'
  | 'maxRetryWait'
  | 'compact'
  | 'compactAt'
  | 'contextWindow'
  | 'thinking'
  | 'push'
  | 'pushTimeout'
  | 'pushRetry'
> {
  yes?: boolean;
  inFlight: InFlightPolicy;
  restore?: boolean;
  keepWorktree?: boolean;
  /** Commander's --no-sandbox: false when given. */
  sandbox?: boolean;
  allowNetwork?: boolean;
  allowGitWrites?: boolean;
  /** --trust: this folder's own files (settings, .mcp.json) take effect, with no terminal too; recorded in the trust store. */
  trust?: boolean;
  json?: boolean;
  /** --allowedTools: allow rules the person gives for this command (their own, as their settings file's). */
  allowedTools?: string[];
  /** --disallowedTools: deny rules the person gives for this command. */
  disallowedTools?: string[];
}

/** Adds the options of a command that drives a run (`run`, `resume`, `continue`). */
export function addDriveOptions(command: Command): Command {
  return command
    .option(
      '--model <name>',
      "an Anthropic model id, or script:<file> for a scripted model (default: the run's model, else claude-sonnet-5-5)",
    )
    .option('-y, --yes', 'approve every tool call without asking')
    .option(
      '--max-steps <n>',
      'stop before the run passes n steps (model calls, tool calls, ...); no limit by default',
      positiveInt('--max-steps'),
    )
    .option('--max-turns <n>', 'stop before the run passes n model calls; no limit by default', positiveInt('--max-turns'))
    .option(
      '--max-cost <usd>',
      "stop before a model call once the run's estimated cost reaches this many US dollars; no limit by default",
      positiveNumber('--max-cost'),
    )
    .option(
      '--max-tokens <n>',
      'the longest answer the model may give, in tokens (pinned with a new run; default 8192)',
      positiveInt('--max-tokens'),
    )
    .option(
      '--max-retry-wait <seconds>',
      'the longest wait a busy model service may ask for (retry-after) before savepoint stops cleanly instead; default 60',
      positiveNumber('--max-retry-wait'),
    )
    .option(
      '--context-window <tokens>',
      "the model's context window (pinned with a new run; default: the model's known window, else 200,000)",
      positiveInt('--context-window'),
    )
    .option(
      '--compact-at <fraction>',
      'compact the conversation when it reaches this fraction of the context window (pinned; default 0.8)',
      fraction('--compact-at'),
    )
    .option(
      '--thinking <budget>',
      'extended thinking with this many tokens of budget, at least 1024 (pinned with a new run; default off)',
      thinkingBudget,
    )
    .option('--no-compact', 'never compact the conversation (pinned with a new run): a conversation that outgrows the window then fails')
    .addOption(
      new Option(
        '--in-flight <policy>',
        'a command started before a crash and never recorded: report it to the model as unknown, rerun it, or fail',
      )
        .choices(IN_FLIGHT_POLICIES as string[])
        .default('report'),
    )
    .option('--restore', "if the files differ from the journal's last checkpoint, put them back as recorded")
    .option('--keep-worktree', "if the files differ from the journal's last checkpoint, go on with them as they are")
    .option('--json', 'print JSON Lines on stdout, one object per event (see docs/json-events.md); messages for people go to stderr')
    .option(
      '--push <remote>',
      'push the agent-journal branch to this remote as the run goes, in the background; a command waits until the remote has its start (stops if another machine moved the run on)',
    )
    .option(
      '--no-push',
      "never push this run, not even one that came from a remote's journal (by default such a run pushes there as --push <remote> would, so no command runs on two machines)",
    )
    .option(
      '--push-timeout <seconds>',
      'the longest one git call of --push may take before it is given up and tried again ($SAVEPOINT_PUSH_TIMEOUT; default 30)',
      positiveNumber('--push-timeout'),
    )
    .option(
      '--push-retry <seconds>',
      'how long --push keeps retrying a failing remote before the run stops at its next command ($SAVEPOINT_PUSH_RETRY; default 60)',
      positiveNumber('--push-retry'),
    )
    .option(
      '--no-sandbox',
      'run commands unconfined, with your whole environment and file system (default: in bubblewrap where the machine has it)',
    )
    .option('--allow-network', 'let commands in the sandbox reach the network')
    .option('--allow-git-writes', 'let commands in the sandbox write .git (commit, branch, tag); the journal branch is then unprotected')
    .option(
      '--allowedTools <rules>',
      'allow rules for this command, as Claude Code takes them and as settings\' "allow" holds them (comma- or space-separated; repeatable): --allowedTools "Bash(npm test:*),Read" or "run_bash(npm test)" (see docs/settings.md)',
      ruleList('--allowedTools'),
    )
    .option(
      '--disallowedTools <rules>',
      'deny rules for this command, as settings\' "deny" holds them: --disallowedTools "Bash(rm:*) WebFetch"',
      ruleList('--disallowedTools'),
    )
    .option(
      '--trust',
      "trust this folder's own files (.savepoint/settings*.json, .mcp.json) as they are now, and remember it, as answering yes to the trust question does (see docs/trust.md); its MCP servers still need savepoint mcp approve",
    );
}

// A flag's list of rules, added to those of its earlier occurrences; a rule parseRule refuses stops the command, named.
function ruleList(flag: string): (value: string, earlier: string[] | undefined) => string[] {
  return (value, earlier) => {
    const { rules, problem } = splitRuleList(value);
    if (problem) throw new UsageError(`${flag}: the rule "${problem.rule}" ${problem.problem}.`);
    if (rules.length === 0)
      throw new UsageError(`${flag} needs one or more rules, such as "Bash(npm test:*)" or "read_file", not "${value}".`);
    return [...(earlier ?? []), ...rules];
  };
}

function positiveInt(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a whole number above 0, not "${value}".`);
    return n;
  };
}

function thinkingBudget(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1024)
    throw new UsageError(`--thinking needs a token budget of at least 1024 (the API's minimum), not "${value}".`);
  return n;
}

function fraction(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!value.trim() || !Number.isFinite(n) || n <= 0 || n >= 1)
      throw new UsageError(`${flag} needs a fraction between 0 and 1 (such as 0.8), not "${value}".`);
    return n;
  };
}

function positiveNumber(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!value.trim() || !Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} needs a number above 0, not "${value}".`);
    return n;
  };
}
