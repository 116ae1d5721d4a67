// Permission rules: `write_file`, `run_bash(npm test*)`, `edit_file(src/**)`, `mcp__github__*`.
// A rule is a tool-name pattern, optionally with a pattern for what the call acts on: the command
// of a call that has one, else its path. The matcher knows no tool by name, so MCP tools
// (`mcp__<server>__<tool>`) and tools added later match the same way. Deny rules win over allow
// rules, and over --yes: a denied call is answered with an error the model reads, and the run goes on.
import { posix } from 'node:path';

/** What a rule decides about a call, with the rule that decided it. */
export interface RuleVerdict {
  verdict: 'allow' | 'deny';
  rule: string;
}

/** A rule split into its parts, or what is wrong with it. */
export interface ParsedRule {
  tool: string;
  pattern?: string;
  problem?: string;
}

/** Splits `name(pattern)` and checks it; `problem` says what is wrong with a malformed one. */
export function parseRule(rule: string): ParsedRule {
  const text = rule.trim();
  const match = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s.exec(text);
  if (!match) return { tool: text, problem: `is not a rule: a tool name (such as "write_file") or a tool name with a pattern in parentheses ("run_bash(npm test*)")` };
  const pattern = match[2];
  if (pattern !== undefined && !pattern.trim()) return { tool: match[1]!, problem: 'has empty parentheses: leave them out to match every call of the tool' };
  return { tool: match[1]!, ...(pattern !== undefined ? { pattern: pattern.trim() } : {}) };
}

/** The allow and deny rules in force, with a decision for any call. */
export class PermissionRules {
  private readonly allow: string[];
  private readonly deny: string[];

  constructor(rules: { allow?: readonly string[]; deny?: readonly string[] } = {}) {
    this.allow = [...(rules.allow ?? [])];
    this.deny = [...(rules.deny ?? [])];
  }

  /** Adds an allow rule for the rest of this process (`a` at an approval). */
  addAllow(rule: string): void {
    if (!this.allow.includes(rule)) this.allow.push(rule);
  }

  /** The deny rule that matches the call, else the allow rule that does, else undefined (the mode decides). */
  decide(tool: string, input: Record<string, unknown>): RuleVerdict | undefined {
    const denied = this.deny.find((rule) => ruleMatches(rule, tool, input));
    if (denied) return { verdict: 'deny', rule: denied };
    const allowed = this.allow.find((rule) => ruleMatches(rule, tool, input));
    return allowed ? { verdict: 'allow', rule: allowed } : undefined;
  }
}

/** True when `rule` covers a call of `tool` with `input`. */
export function ruleMatches(rule: string, tool: string, input: Record<string, unknown>): boolean {
  const parsed = parseRule(rule);
  if (parsed.problem || !globToRegExp(parsed.tool, false).test(tool)) return false;
  if (parsed.pattern === undefined) return true;
  const { subject, isPath } = subjectOf(input);
  if (subject === undefined) return false;
  // Claude Code writes a command prefix as `npm test:*`; it means the same as `npm test*` here.
  const pattern = isPath ? parsed.pattern.replace(/^\.\//, '') : parsed.pattern.replace(/:\*$/, '*');
  return globToRegExp(pattern, isPath).test(subject);
}

/**
 * The rule that would allow calls like this one from now on, as `a` at an approval offers it: the
 * command's first word for a command (`run_bash(npm *)`), the folder for a path (`edit_file(src/**)`).
 */
export function suggestRule(tool: string, input: Record<string, unknown>): string {
  const { subject, isPath } = subjectOf(input);
  if (subject === undefined) return tool;
  if (!isPath) {
    const words = subject.trim().split(/\s+/);
    return words.length > 1 ? `${tool}(${words[0]} *)` : `${tool}(${escapeGlob(words[0] ?? '')})`;
  }
  const dir = posix.dirname(subject);
  return dir === '.' ? `${tool}(${escapeGlob(subject)})` : `${tool}(${escapeGlob(dir)}/**)`;
}

// What a call acts on: its command, else its path (normalised, relative to the repository root).
function subjectOf(input: Record<string, unknown>): { subject?: string; isPath: boolean } {
  if (typeof input.command === 'string') return { subject: input.command, isPath: false };
  if (typeof input.path === 'string') return { subject: posix.normalize(input.path.replace(/\\/g, '/')).replace(/^\.\//, '').replace(/^\/+/, ''), isPath: true };
  return { isPath: false };
}

function escapeGlob(text: string): string {
  return text.replace(/[*?]/g, '\\$&');
}

// A glob as a regular expression. For paths `*` stays within one folder and `**` crosses them; for
// names and commands `*` matches anything. `?` is one character; `\` escapes the next one.
function globToRegExp(glob: string, isPath: boolean): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) source += escapeRe(glob[++i]!);
    else if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        source += '(?:.*/)?'; // `src/**/x` matches src/x too
      } else source += '.*';
    } else if (c === '*') source += isPath ? '[^/]*' : '.*';
    else if (c === '?') source += isPath ? '[^/]' : '.';
    else source += escapeRe(c);
  }
  return new RegExp(`^${source}$`, 's');
}

function escapeRe(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
