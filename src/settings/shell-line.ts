// What a shell line would run, for the permission rules: every simple command in it, each part of
// `;`, `&&`, `||`, `|`, `&` and newlines, inside `$(…)`, backticks, subshells, braces, if / while /
// for / case bodies, parameter expansions (`${x:-$(…)}`) and assignments (`x=$(…)`), found by a real
// shell parser (@ericcornelissen/bash-parser: POSIX shell grammar, pure JavaScript, synchronous;
// docs/architecture.md says why this one). A rule judges each command; a line the parse cannot
// vouch for (a parse error, a command word that is itself an expansion, eval, a function defined in
// the line, a here-document, anything the walk does not know) is `unjudgeable`: no allow rule
// covers it, so it asks.
// Tested in test/settings/permissions.test.ts.
import { createRequire } from 'node:module';

/** One simple command of a shell line. */
export interface ShellCommand {
  /** The command as written in the line, from its first word to its last (assignments before it and its redirects included). */
  text: string;
  /** Its words with the shell's quotes taken off: the command name and its arguments (no assignments, no redirects). */
  words: string[];
  /** True when assignments come before the command (`FOO=1 npm test`): they change what it runs. */
  assigns: boolean;
}

/** The simple commands a line would run, and why the rules cannot judge it when they cannot. */
export interface ShellLine {
  commands: ShellCommand[];
  /** Why no rule can vouch for the whole line (it then asks); undefined when every command was found. */
  unjudgeable?: string;
}

// The parser's tree, as far as this walk reads it.
interface Node {
  type: string;
  text?: string;
  loc?: { start: { char: number }; end: { char: number } };
  name?: Node;
  prefix?: Node[];
  suffix?: Node[];
  expansion?: Array<{ type: string; command?: string; expression?: string; word?: unknown }>;
  [key: string]: unknown;
}

type Parse = (line: string, options?: { insertLOC?: boolean; mode?: string }) => Node;

// Loaded on first use, through Node's own require: the package is CommonJS, and most runs judge no
// command rule, so it stays out of the bundle (scripts/bundle.js lists it as external).
let parser: Parse | undefined;
function bashParser(): Parse {
  parser ??= createRequire(import.meta.url)('@ericcornelissen/bash-parser') as Parse;
  return parser;
}

// The node types the walk knows; any other one (a construct this parser learns later) is not judged.
const KNOWN = new Set([
  'Script',
  'Pipeline',
  'LogicalExpression',
  'Command',
  'CompoundList',
  'Subshell',
  'If',
  'While',
  'Until',
  'For',
  'Case',
  'CaseItem',
  'Word',
  'AssignmentWord',
  'Redirect',
  'Name',
  'io_number',
]);

// Redirect operators (`>`, `>>`, `<`, ...) the parser writes as nodes of their own type.
const OPERATOR_TYPES = new Set(['great', 'dgreat', 'less', 'greatand', 'lessand', 'lessgreat', 'clobber', 'andgreat', 'andgreat_dgreat']);

// Command names that run text the parse cannot see as commands: what they run is decided when the line runs.
const OPAQUE = new Set(['eval', 'source', '.', 'trap']);

// How deep `$(…)` may nest before the line is not judged (a line is a few hundred characters; this is a guard).
const MAX_DEPTH = 16;

/**
 * The longest line parsed: the parser's time grows with the line (a few milliseconds for a usual
 * command, most of a second for a 4,000-character script on a busy machine), and a longer line (a file
 * written through `echo`) is one no allow rule judges anyway without reading it whole.
 */
export const MAX_JUDGED_CHARS = 4_000;

/** Every simple command `line` would run, found by parsing it as the shell would. */
export function parseShellLine(line: string): ShellLine {
  const found: ShellLine = { commands: [] };
  try {
    walkLine(line, found, 0);
  } catch (error) {
    // The parser or the walk failing on a line (a tree too deep for the stack): judged by no allow rule.
    found.unjudgeable ??= `the shell parse failed (${String((error as Error)?.message ?? error).split('\n')[0]})`;
  }
  return found;
}

function walkLine(line: string, found: ShellLine, depth: number): void {
  if (depth > MAX_DEPTH) return void (found.unjudgeable ??= 'its command substitutions nest too deep');
  if (line.length > MAX_JUDGED_CHARS)
    return void (found.unjudgeable ??= `it is longer than the ${MAX_JUDGED_CHARS} characters the rules judge`);
  // The parser does not know here-documents (it would read their text as commands, slowly): a line
  // with `<<` anywhere, even one in quotes, is not judged.
  if (line.includes('<<')) return void (found.unjudgeable ??= 'it has a here-document');
  let tree: Node;
  try {
    tree = bashParser()(line, { insertLOC: true });
  } catch (error) {
    found.unjudgeable ??= `the shell parse failed (${String((error as Error)?.message ?? error)
      .split('\n')[0]!
      .replace(/^Error: /, '')})`;
    return;
  }
  walk(tree, line, found, depth);
}

function walk(node: unknown, line: string, found: ShellLine, depth: number): void {
  if (Array.isArray(node)) return node.forEach((child) => walk(child, line, found, depth));
  if (typeof node !== 'object' || node === null) return;
  const n = node as Node;
  if (typeof n.type !== 'string') return;
  if (n.type === 'Function') return void (found.unjudgeable ??= 'it defines a function');
  if (n.type === 'dless' || n.type === 'dlessdash') return void (found.unjudgeable ??= 'it has a here-document');
  if (OPERATOR_TYPES.has(n.type)) return;
  if (!KNOWN.has(n.type)) return void (found.unjudgeable ??= `it has a construct the rules do not judge (${n.type})`);
  if (n.type === 'Word' || n.type === 'AssignmentWord' || n.type === 'Name') return expansions(n, found, depth);
  if (n.type === 'Command') command(n, line, found);
  for (const [key, value] of Object.entries(n)) if (key !== 'loc' && key !== 'type') walk(value, line, found, depth);
}

// A simple command: what it runs, as written and as words.
function command(n: Node, line: string, found: ShellLine): void {
  if (!n.name) return; // only assignments or redirects: no program runs (their expansions are walked)
  if (n.name.expansion?.length) return void (found.unjudgeable ??= `its command word ${JSON.stringify(n.name.text ?? '')} is an expansion`);
  const name = n.name.text ?? '';
  if (OPAQUE.has(name)) found.unjudgeable ??= `it runs "${name}", whose commands are known only when it runs`;
  // A command word the shell may still expand into another one: `{rm,-rf,x}`, `r?`, `/bin/r*`.
  if (name !== '[' && name !== '[[' && /[{}*?[]/.test(name))
    found.unjudgeable ??= `its command word ${JSON.stringify(name)} may expand to another command`;
  const text = n.loc
    ? line.slice(n.loc.start.char, n.loc.end.char + 1).trim()
    : [name, ...(n.suffix ?? []).map((w) => w.text ?? '')].join(' ');
  const words = [name, ...(n.suffix ?? []).filter((w) => w.type === 'Word').map((w) => w.text ?? '')];
  const assigns = (n.prefix ?? []).some((p) => p.type === 'AssignmentWord');
  found.commands.push({ text, words, assigns });
}

// The commands inside a word: `$(…)` and backticks (parsed again as lines of their own), and the
// words inside `${x:-…}`; arithmetic that could run anything is not judged.
function expansions(word: Node, found: ShellLine, depth: number): void {
  for (const expansion of word.expansion ?? []) {
    if (expansion.type === 'CommandExpansion') walkLine(expansion.command ?? '', found, depth + 1);
    else if (expansion.type === 'ArithmeticExpansion' && /[$`]/.test(expansion.expression ?? ''))
      found.unjudgeable ??= 'its arithmetic expands a parameter or a command';
    else if (expansion.type === 'ParameterExpansion' && typeof expansion.word === 'object' && expansion.word !== null)
      expansions(expansion.word as Node, found, depth);
  }
}

/**
 * A conservative split of a line the rules cannot judge, for deny rules only: the text between
 * every shell operator and bracket, each also with braces, commas and quotes read as spaces
 * (`{rm,-f,x}` is `rm -f x` once expanded), so that a deny rule still sees each command such a line
 * might run (it may see more than runs; it never sees less).
 */
export function roughCommands(line: string): string[] {
  return line
    .split(/[;&|\n()`]|\$\(|<\(|>\(/)
    .flatMap((part) => [part, part.replace(/[{},"']/g, ' ')])
    .map((part) =>
      part
        .trim()
        .replace(/\s+/g, ' ')
        .replace(/^(?:!|then|do|else|elif|if|while|until) /, ''),
    )
    .filter((part) => part !== '');
}
