// Permission rules: `write_file`, `run_bash(npm test*)`, `edit_file(src/**)`, `mcp__github__*`, and
// Claude Code's spellings of the same (`Bash(npm test:*)`, `Read(./.env)`, `Edit(src/**)`, `Write`,
// `WebFetch(domain:example.com)`). A rule is a tool name, optionally with a pattern for what the
// call acts on: the command of a call that has one, else its path, else its URL's domain. A rule
// that names neither one of savepoint's tools, one of Claude Code's, nor an MCP tool is refused at
// load: a rule accepted and then never matching would be a deny that denies nothing.
//
// Rules judge what will actually happen. A path is the file the tool will reach (resolved as the
// tool resolves it: absolute or relative, `..`, a trailing slash, symbolic links followed). A command
// is every simple command its shell line would run (shell-line.ts): an allow rule must cover each of
// them, and a line the parse cannot vouch for is covered by no allow rule (it asks); a deny rule
// matches when it matches any one of them. Deny rules win over allow rules, and over --yes: a denied
// call is answered with an error the model reads, and the run goes on.
import { homedir } from 'node:os';
import { isAbsolute, posix, relative, resolve } from 'node:path';
import { realpathSync } from 'node:fs';
import { resolveInRepo, toRepoRelative } from '../tools/path-utils.js';
import { isControlPath } from '../tools/control-files.js';
import { parseShellLine, roughCommands, type ShellLine } from './shell-line.js';

/** What a rule decides about a call, with the rule that decided it and where that rule came from. */
export interface RuleVerdict {
  verdict: 'allow' | 'deny';
  rule: string;
  /** The settings file the rule came from ("session" for one `a` added). */
  source?: string;
}

/** A rule split into its parts, or what is wrong with it. */
export interface ParsedRule {
  /** The name as written (`Bash`, `run_bash`, `mcp__github__*`). */
  tool: string;
  /** The savepoint tool names (or name patterns) the rule covers: Claude Code's `Read` covers read_file, list_files and search. */
  tools: string[];
  pattern?: string;
  problem?: string;
}

/** Where a rule came from: a settings file's scope, or `a` at an approval in this session. */
export type RuleScope = 'user' | 'project' | 'local' | 'session';

/** One rule in force, with where it came from. */
export interface RuleEntry {
  rule: string;
  /** The settings file it came from, for messages. */
  source?: string;
  /** The scope of that file: only the user's own rules may allow a write to a file that decides what runs. */
  scope?: RuleScope;
}

/** savepoint's own tools, as rules name them. */
export const TOOL_NAMES: readonly string[] = [
  'read_file',
  'write_file',
  'edit_file',
  'run_bash',
  'list_files',
  'search',
  'web_fetch',
  'bash_output',
  'kill_bash',
];

/**
 * Claude Code's tool names and the savepoint tools each covers: its Read covers reading with Grep
 * and Glob too, its Edit covers every file edit (a whole-file write included).
 */
export const CLAUDE_CODE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Bash: ['run_bash'],
  Read: ['read_file', 'list_files', 'search'],
  Edit: ['edit_file', 'write_file'],
  MultiEdit: ['edit_file'],
  Write: ['write_file'],
  WebFetch: ['web_fetch'],
  Glob: ['list_files'],
  Grep: ['search'],
  BashOutput: ['bash_output'],
  KillShell: ['kill_bash'],
};

// The tools whose `path` is the one file they change.
const WRITE_TOOLS = new Set(['write_file', 'edit_file']);

/**
 * The rules of a command-line list as Claude Code's `--allowedTools` takes them: separated by commas
 * or spaces, except inside a rule's parentheses (`Bash(npm test:*), Read`); each checked by
 * parseRule, the first bad one named in `problem`.
 */
export function splitRuleList(list: string): { rules: string[]; problem?: { rule: string; problem: string } } {
  const rules: string[] = [];
  let current = '';
  let depth = 0;
  for (const char of list) {
    if (char === '(') depth++;
    else if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      if (current.trim()) rules.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim()) rules.push(current.trim());
  for (const rule of rules) {
    const { problem } = parseRule(rule);
    if (problem) return { rules, problem: { rule, problem } };
  }
  return { rules };
}

/** Splits `name(pattern)` and checks it; `problem` says what is wrong with a malformed or unknown one. */
export function parseRule(rule: string): ParsedRule {
  const text = rule.trim();
  const match = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s.exec(text);
  if (!match)
    return {
      tool: text,
      tools: [],
      problem: `is not a rule: a tool name (such as "write_file") or a tool name with a pattern in parentheses ("run_bash(npm test*)")`,
    };
  const name = match[1]!;
  const pattern = match[2];
  if (pattern !== undefined && !pattern.trim())
    return { tool: name, tools: [], problem: 'has empty parentheses: leave them out to match every call of the tool' };
  const tools = toolsOf(name);
  if (tools.length === 0) {
    return {
      tool: name,
      tools,
      problem: `names no tool: "${name}" is neither one of savepoint's tools (${TOOL_NAMES.join(', ')}), one of Claude Code's (${Object.keys(CLAUDE_CODE_TOOLS).join(', ')}), nor an MCP tool (mcp__<server>__<tool>)`,
    };
  }
  return { tool: name, tools, ...(pattern !== undefined ? { pattern: pattern.trim() } : {}) };
}

// The savepoint tool names (or name globs) a rule's name covers; none for a name that is no tool.
function toolsOf(name: string): string[] {
  const claude = CLAUDE_CODE_TOOLS[name];
  if (claude) return [...claude];
  if (name.startsWith('mcp__')) {
    // Claude Code's `mcp__server` covers every tool of the server.
    return name.includes('__', 5) || name.includes('*') ? [name] : [name, `${name}__*`];
  }
  const glob = globToRegExp(name, false);
  return TOOL_NAMES.some((tool) => glob.test(tool)) ? [name] : [];
}

/** The allow and deny rules in force, with a decision for any call. */
export class PermissionRules {
  private readonly allow: RuleEntry[];
  private readonly deny: RuleEntry[];
  private readonly root: string | undefined;

  /** `root`: the repository the tools resolve paths in (path rules match the file a path reaches there). */
  constructor(rules: { allow?: ReadonlyArray<string | RuleEntry>; deny?: ReadonlyArray<string | RuleEntry>; root?: string } = {}) {
    const entry = (rule: string | RuleEntry): RuleEntry => (typeof rule === 'string' ? { rule } : rule);
    this.allow = (rules.allow ?? []).map(entry);
    this.deny = (rules.deny ?? []).map(entry);
    this.root = rules.root;
  }

  /**
   * Adds a rule the person gave on the command line (`--allowedTools`, `--disallowedTools`): their
   * own say-so, as their own settings file's rules are (scope 'user'), `source` naming the flag.
   */
  addGiven(kind: 'allow' | 'deny', rule: string, source: string): void {
    const list = kind === 'allow' ? this.allow : this.deny;
    if (!list.some((entry) => entry.rule === rule && entry.source === source)) list.push({ rule, source, scope: 'user' });
  }

  /** Adds an allow rule for the rest of this process (`a` at an approval). */
  addAllow(rule: string): void {
    if (!this.allow.some((entry) => entry.rule === rule)) this.allow.push({ rule, source: 'session', scope: 'session' });
  }

  /**
   * The deny rule that matches the call, else the allow rule that does, else undefined (the mode
   * decides). A write to a file that decides what runs is allowed only by the user's own rules.
   */
  decide(tool: string, input: Record<string, unknown>): RuleVerdict | undefined {
    if (this.allow.length === 0 && this.deny.length === 0) return undefined;
    const call = judgeCall(tool, input, this.root);
    const verdict = (verdict: 'allow' | 'deny', entry: RuleEntry): RuleVerdict => ({
      verdict,
      rule: entry.rule,
      ...(entry.source ? { source: entry.source } : {}),
    });
    const denied = this.deny.find((entry) => matches(entry.rule, call, 'deny'));
    if (denied) return verdict('deny', denied);
    const control = isControlCall(call);
    const allowed = this.allow.find((entry) => (!control || entry.scope === 'user') && matches(entry.rule, call, 'allow'));
    return allowed ? verdict('allow', allowed) : undefined;
  }
}

/**
 * True when the call is a write_file or edit_file to a file that decides what runs (settings,
 * `.mcp.json`, instructions; tools/control-files.ts), judged on the path the tool will resolve.
 */
export function writesControlFile(tool: string, input: Record<string, unknown>, root: string | undefined): boolean {
  return isControlCall(judgeCall(tool, input, root));
}

/**
 * True when `rule` covers a call of `tool` with `input`: as an allow rule (every command of a shell
 * line, the file the path reaches), or with `as: 'deny'` as a deny rule (any command of the line).
 */
export function ruleMatches(
  rule: string,
  tool: string,
  input: Record<string, unknown>,
  options: { root?: string; as?: 'allow' | 'deny' } = {},
): boolean {
  return matches(rule, judgeCall(tool, input, options.root), options.as ?? 'allow');
}

/**
 * The narrowest rules that allow calls exactly like this one from now on, as `a` at an approval
 * offers them: each command of the shell line as it is written (`run_bash(npm test)`), the file the
 * path reaches (`edit_file(src/cli/a.ts)`), the tool for a call with neither. None for a line the
 * rules cannot judge, or a write to a file that decides what runs: those ask every time.
 */
export function suggestRules(tool: string, input: Record<string, unknown>, root?: string): string[] {
  const call = judgeCall(tool, input, root);
  if (isControlCall(call)) return [];
  if (call.line) {
    if (call.line.unjudgeable || call.line.commands.length === 0) return [];
    return [...new Set(call.line.commands.map((command) => `${tool}(${escapeGlob(command.text)})`))];
  }
  if (call.path !== undefined) return call.path.resolved === undefined ? [] : [`${tool}(${escapeGlob(call.path.resolved)})`];
  if (call.domain !== undefined) return call.domain === '' ? [] : [`${tool}(domain:${escapeGlob(call.domain)})`];
  return [tool];
}

// A call as the rules see it: its tool, and what it acts on, judged once for every rule.
interface JudgedCall {
  tool: string;
  /** run_bash's command, parsed. */
  command?: string;
  line?: ShellLine;
  /** The path: as the tool will resolve it (undefined when it will refuse it), and as given, normalised. */
  path?: { resolved?: string; given: string };
  domain?: string;
  root?: string;
}

function judgeCall(tool: string, input: Record<string, unknown>, root: string | undefined): JudgedCall {
  const call: JudgedCall = { tool, ...(root ? { root } : {}) };
  if (typeof input.command === 'string') {
    call.command = input.command;
    call.line = parseShellLine(input.command);
  } else if (typeof input.path === 'string' || tool === 'list_files' || tool === 'search') {
    // list_files and search without a path act on the whole repository.
    const given = typeof input.path === 'string' && input.path.trim() !== '' ? input.path : '.';
    call.path = { given: normalise(given), resolved: resolvePath(given, root) };
  } else if (typeof input.url === 'string') {
    try {
      call.domain = new URL(input.url).hostname.toLowerCase();
    } catch {
      call.domain = '';
    }
  }
  return call;
}

function isControlCall(call: JudgedCall): boolean {
  if (!WRITE_TOOLS.has(call.tool) || !call.path) return false;
  // With no repository there is nothing to resolve against: the path as given decides.
  return isControlPath(call.path.resolved ?? call.path.given);
}

// The path as the tool will reach it, relative to the repository root; undefined when the tool will
// refuse it (outside the repository, inside .git). With no root, the path as written, normalised.
function resolvePath(path: string, root: string | undefined): string | undefined {
  if (!root) return normalise(path);
  try {
    return toRepoRelative(root, resolveInRepo(root, path));
  } catch {
    return undefined;
  }
}

function normalise(path: string): string {
  const normal = posix
    .normalize(path.replace(/\\/g, '/'))
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  return normal === '' ? '.' : normal;
}

function matches(rule: string, call: JudgedCall, as: 'allow' | 'deny'): boolean {
  const parsed = parseRule(rule);
  if (parsed.problem || !parsed.tools.some((name) => globToRegExp(name, false).test(call.tool))) return false;
  if (parsed.pattern === undefined) return true;
  if (call.line && call.command !== undefined) {
    // Claude Code writes a command prefix as `npm test:*`; it means the same as `npm test*` here.
    const glob = globToRegExp(parsed.pattern.replace(/:\*$/, '*'), false);
    if (as === 'allow')
      return !call.line.unjudgeable && call.line.commands.length > 0 && call.line.commands.every((command) => glob.test(command.text));
    return denyForms(call.command, call.line).some((form) => glob.test(form));
  }
  if (call.path) {
    const pattern = pathPattern(parsed.pattern, call.root);
    if (pattern === undefined) return false;
    const glob = globToRegExp(pattern, true);
    const test = (path: string) => glob.test(path) || (path === '.' ? false : glob.test(`${path}/`));
    if (as === 'allow') return call.path.resolved !== undefined && test(call.path.resolved);
    // A deny rule also holds on the path as it was written: never less than what the rule says.
    return (call.path.resolved !== undefined && test(call.path.resolved)) || test(call.path.given);
  }
  if (call.domain !== undefined && parsed.pattern.startsWith('domain:'))
    return call.domain !== '' && globToRegExp(parsed.pattern.slice(7).trim().toLowerCase(), false).test(call.domain);
  return false;
}

// The pattern of a path rule, relative to the repository root as the resolved paths are: `./x` and
// `/x` from the root, `//abs/x` an absolute path, `~/x` under the home folder (each made relative
// to the root; one outside it matches nothing there), a trailing `/` a whole folder.
function pathPattern(pattern: string, root: string | undefined): string | undefined {
  let p = pattern;
  const absolute = p.startsWith('//') ? p.slice(1) : p.startsWith('~/') ? `${homedir()}/${p.slice(2)}` : undefined;
  if (absolute !== undefined) {
    if (!root) return undefined;
    const realRoot = safeRealpath(root);
    const rel = relative(realRoot, resolve(absolute));
    if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
    p = rel.split('\\').join('/') || '.';
  }
  p = p.replace(/^(\.\/)+/, '').replace(/^\/+/, '');
  if (p.endsWith('/')) p += '**';
  return p === '' ? '.' : p;
}

function safeRealpath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

// Every form of each command a deny rule is held against: as written, as its words (quotes taken
// off: `"rm" x` is `rm x`, `FOO=1 rm x` is `rm x`), by the program's own name (`/bin/rm x`),
// without the wrappers that run the command after them (`sudo rm x`, `env A=1 rm x`, `xargs rm`),
// and the commands a `sh -c '…'` runs. A line the parser cannot vouch for is also split roughly at
// every operator: more than runs, never less.
function denyForms(command: string, line: ShellLine): string[] {
  const forms: string[] = [];
  const named = (words: string[]) => [posix.basename(words[0] ?? ''), ...words.slice(1)].join(' ');
  const add = (found: ShellLine, depth: number) => {
    for (const { text, words } of found.commands) {
      forms.push(text, words.join(' '), named(words));
      const inner = unwrapped(words);
      if (inner.length) forms.push(inner.join(' '), named(inner));
      const shell = inner.length ? inner : words;
      const c = shell.indexOf('-c');
      if (depth < 4 && SHELLS.has(posix.basename(shell[0] ?? '')) && c > 0 && shell[c + 1] !== undefined)
        add(parseShellLine(shell[c + 1]!), depth + 1);
    }
  };
  add(line, 0);
  if (line.unjudgeable) forms.push(...roughCommands(command));
  return forms;
}

// Commands that run the command after them.
const WRAPPERS = new Set([
  'sudo',
  'env',
  'command',
  'builtin',
  'exec',
  'nohup',
  'nice',
  'time',
  'timeout',
  'xargs',
  'stdbuf',
  'setsid',
  'doas',
  'ionice',
  'coproc',
]);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh']);

// The words of the command a wrapper runs, or none when the command is no wrapper: its options,
// assignments and numbers (a timeout) are skipped.
function unwrapped(words: string[]): string[] {
  let i = 0;
  while (i < words.length && WRAPPERS.has(posix.basename(words[i]!))) {
    i++;
    while (i < words.length && /^(-|\d|[A-Za-z_][A-Za-z0-9_]*=)/.test(words[i]!)) i++;
  }
  return i === 0 ? [] : words.slice(i);
}

function escapeGlob(text: string): string {
  return text.replace(/[*?\\]/g, '\\$&');
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
