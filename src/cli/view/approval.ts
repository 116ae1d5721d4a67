// Asking a person before a live command or write. Replayed steps never ask: they do not run. The
// question shows what will happen, whole: the entire command and every MCP argument, wrapped to the
// terminal (never cut at its width), the diff of an edit, the head of a write with its size; a
// "no" may carry a reason, which the model reads in the declined result; Ctrl-C at the question
// stops the run like Ctrl-C anywhere (InterruptedError, exit 130). Settings' rules are asked
// before this (tool-call.ts), so a call a rule allows or denies never gets here; the mode from
// settings (`defaultMode`) approves edits, or everything, without asking; `a` offers to remember the
// narrowest rule that covers the call for the session, or to write it to .savepoint/settings.local.json.
// A write to a file that decides what runs (settings, .mcp.json, instructions) always asks: neither
// the mode nor a rule `a` remembered approves it; only --yes given on the command line does.
// The run's other two questions live here too: files that drifted from the journal (restore, keep or
// quit), and running commands unconfined where no sandbox can be had.
// Tested in test/cli/approval.test.ts, test/cli/view/trust-question.test.ts.
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { ApprovalRequiredError, describeChanges, InterruptedError } from '../../errors/index.js';
import type { Approver } from '../../agent/tool-call.js';
import type { AnyTool } from '../../tools/types.js';
import { chunkColumns, displayWidth, showControls, terminalJson } from '../../format/text.js';
import {
  addLocalAllowRule,
  parseShellLine,
  suggestRules,
  writesControlFile,
  type PermissionMode,
  type PermissionRules,
} from '../../settings/index.js';
import { type Style } from '../terminal/style.js';
import { editPreview } from './edit-preview.js';
import type { LiveView } from './live-view.js';

/** How many lines of a write's content outside a repository the question shows (a command is shown whole). */
export const PREVIEW_LINES = 12;
/** How many lines of an edit's or a write's diff (file names and hunks) the question shows. */
export const DIFF_PREVIEW_LINES = 24;

/** What createApprover needs: the answers' source, where to ask, and what to do on Ctrl-C. */
export interface ApproverOptions {
  /** --yes given on the command line: approves everything, a write to a file that decides what runs included. */
  yes: boolean;
  /** Settings' defaultMode: 'yes' is --yes, 'acceptEdits' approves edits and writes without asking. Default 'ask'. */
  mode?: PermissionMode;
  /** The session's rules, where `a` adds the rule it remembers. */
  rules?: PermissionRules;
  /** Where an interactive session keeps the rules `a` remembered, so its later turns (each with the settings read anew) keep them. */
  remembered?: string[];
  /** The repository root, whose .savepoint/settings.local.json `a` may write the rule to. */
  root?: string;
  interactive: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  style?: Style;
  /** Called before asking (with what is asked about) and after the answer (a live view takes its block away meanwhile). */
  onAsk?: (asking: boolean, what?: string) => void;
  /** Ctrl-C at the question: stop the run (the caller aborts it) before the question fails. */
  onInterrupt?: () => void;
  /**
   * Called before the question reads the terminal, to take the keys typed ahead of it off the
   * terminal so they do not answer it: a session keeps them as messages for after the turn, a run
   * drops them (terminal/typed-ahead.ts).
   */
  beforeAsk?: () => Promise<void>;
}

/** The tools `acceptEdits` approves without asking. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(['edit_file', 'write_file']);

/**
 * `--yes` (or mode yes) approves everything; a terminal asks (y / n [reason] / a = remember a rule);
 * otherwise a live step fails. A write to a file that decides what runs is approved only by --yes
 * on the command line or by the person at the terminal, whatever the mode says.
 */
export function createApprover(options: ApproverOptions): Approver {
  if (options.yes) return async () => true;
  const acceptsEdits = options.mode === 'acceptEdits';
  const approvesAll = options.mode === 'yes';
  // The repository's own settings may set the mode: it never decides a write to the files that decide what runs.
  const control = (tool: AnyTool, input: Record<string, unknown>) =>
    EDIT_TOOLS.has(tool.name) && writesControlFile(tool.name, input, options.root);
  if (!options.interactive) {
    return async (tool, input, asker) => {
      if (!control(tool, input) && (approvesAll || (acceptsEdits && EDIT_TOOLS.has(tool.name)))) return true;
      throw new ApprovalRequiredError(
        asker ? `${tool.describe(input)} (asked by subagent "${asker.subagent.description}")` : tool.describe(input),
      );
    };
  }
  return async (tool, input, asker) => {
    const controlWrite = control(tool, input);
    if (!controlWrite && (approvesAll || (acceptsEdits && EDIT_TOOLS.has(tool.name)))) return true;
    // A rule remembered earlier in this session (`a`): the same rules the tool call asked first
    // (they never allow a write to a file that decides what runs).
    if (options.rules?.decide(tool.name, input)?.verdict === 'allow') return true;
    const output = options.output ?? process.stderr;
    options.onAsk?.(true, tool.describe(input));
    try {
      await options.beforeAsk?.();
      // A subagent's question says whose it is: its description, and the run it is.
      if (asker) {
        const label = `Subagent "${showControls(asker.subagent.description)}" (run ${asker.subagent.run}) asks:`;
        output.write(`  ${options.style ? options.style.yellow(label) : label}\n`);
      }
      output.write(await preview(tool, input, options.style, options.root));
      if (controlWrite) {
        const note =
          'This file decides what runs (settings, MCP servers, instructions): it is asked about every time; only --yes given on the command line, or a rule in your own user settings, approves it.';
        output.write(`    ${options.style ? options.style.yellow(note) : note}\n`);
      }
      const always = controlWrite ? '' : ' / [a]lways';
      const answer = (
        await ask(`  Allow ${showControls(tool.describe(input))}? [y]es / [n]o (a reason may follow: "n use pnpm")${always}: `, options)
      ).trim();
      const word = answer.toLowerCase().split(/\s+/)[0] ?? '';
      if (!controlWrite && (word === 'a' || word === 'always' || word === 'all')) {
        await rememberRule(tool.name, input, options);
        return true;
      }
      if (word === 'y' || word === 'yes') return true;
      const reason = /^(n|no)\b[\s,:;.-]*/i.test(answer) ? answer.replace(/^(n|no)\b[\s,:;.-]*/i, '') : word === '' ? '' : answer;
      return reason ? { reason } : false;
    } finally {
      options.onAsk?.(false);
    }
  };
}

// `a`: the narrowest rules that allow calls exactly like this one (each command of the line as
// written, the file the path reaches), for the rest of the session or written to the project's
// local settings (so the next session, and a run with no terminal, allows them too). A line no rule
// can judge is approved this once, and said so.
async function rememberRule(tool: string, input: Record<string, unknown>, options: ApproverOptions): Promise<void> {
  const rules = suggestRules(tool, input, options.root);
  const output = options.output ?? process.stderr;
  const say = (said: string) => output.write(`    ${options.style ? options.style.dim(said) : said}\n`);
  if (rules.length === 0) {
    const why = typeof input.command === 'string' ? parseShellLine(input.command).unjudgeable : undefined;
    return void say(`no rule can cover this${why ? ` (${showControls(why)})` : ''}: allowed this once`);
  }
  const named = rules.map((rule) => `"${showControls(rule)}"`).join(', ');
  const where = options.root ? ' / [w]rite it to .savepoint/settings.local.json' : '';
  const answer = (await ask(`  Allow ${named} from now on: [s]ession only${where}: `, options)).trim().toLowerCase();
  const write = Boolean(options.root) && (answer === 'w' || answer === 'write');
  let written: string | undefined;
  for (const rule of rules) {
    options.rules?.addAllow(rule);
    if (!options.remembered?.includes(rule)) options.remembered?.push(rule);
    // Anything but w is the session only, and said so: an answer never changes settings silently.
    if (write) written = addLocalAllowRule(options.root!, rule);
  }
  say(written ? `added ${named} to ${written}` : `allowed ${named} for this session only`);
}

/** One question on the terminal; Ctrl-C (or the input closing, the terminal hanging up) calls onInterrupt and rejects with InterruptedError. */
export function ask(question: string, options: Pick<ApproverOptions, 'input' | 'output' | 'onInterrupt'>): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: options.input ?? process.stdin, output: options.output ?? process.stderr, terminal: true });
    let answered = false;
    const interrupted = () => {
      if (answered) return;
      answered = true;
      rl.close();
      (options.output ?? process.stderr).write('\n');
      options.onInterrupt?.();
      reject(new InterruptedError(question.trim().replace(/\?.*$/, '?')));
    };
    rl.on('SIGINT', interrupted);
    rl.on('close', interrupted);
    // A terminal that hung up (its window closed) ends the input, and readline's close then fails
    // to change its mode (EIO), emitted here: unheard, it killed the run with a stack trace.
    rl.on('error', interrupted);
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
  });
}

/**
 * What the call will do, shown above the question, whole and wrapped to the terminal's width (a
 * line is never cut at it: what is past the edge is what a person would not see): the command; for
 * an edit or a write under `root`, the real unified diff of the file as it is on disk now (as
 * `savepoint show` prints the step's diff afterwards), or why the call will fail; the head of a
 * write when there is no root; every argument of any other tool (an MCP tool's).
 */
export async function preview(tool: AnyTool, input: Record<string, unknown>, style?: Style, root?: string): Promise<string> {
  const dim = (text: string) => (style ? style.dim(text) : text);
  const width = style?.width ?? 100;
  // Every line is outside text (a command, a file's content): its controls are shown, then it is
  // wrapped at the width, its whitespace kept as it is (an indentation-only edit shows its
  // indentation). A piece that goes on from the line before starts with a dim `↳`, and is painted
  // as its line is (`paint` is given the piece and its whole line).
  const wrap: Wrap = (line, lead, paint) => {
    const onward = '↳'.padEnd(Math.max(2, displayWidth(lead)));
    const room = Math.max(10, width - 4 - Math.max(displayWidth(lead), displayWidth(onward)));
    const shown = showControls(line);
    const pieces = chunkColumns(shown, room);
    if (pieces.length === 0) pieces.push(' ');
    return pieces.map((piece, i) => `    ${i === 0 ? lead : dim(onward)}${paint(piece, shown)}`);
  };
  const show = (lines: string[], total: number, paint: (piece: string, line: string) => string = dim, most = PREVIEW_LINES) => {
    const shown = lines.slice(0, most).flatMap((line) => wrap(line, '', paint));
    if (total > most) shown.push(`    ${dim(`… ${total - most} more line${total - most === 1 ? '' : 's'}`)}`);
    return `${shown.join('\n')}\n`;
  };
  // The model wrote all of it: every line goes through `wrap` (or showControls), never obeyed by the terminal.
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (tool.name === 'run_bash') {
    // The whole command, every line of it: what a person approves is what runs.
    const lines = text(input.command).split('\n');
    const background =
      input.run_in_background === true
        ? `    ${dim("in the background: it goes on after this step, until kill_bash or the run's end")}\n`
        : '';
    return `${lines.flatMap((line, i) => wrap(line, i === 0 ? '$ ' : '  ', (piece) => piece)).join('\n')}\n${background}`;
  }
  const diff = root ? await editPreview(root, tool.name, input) : undefined;
  if (diff) {
    const content = text(input.content);
    const lines = content.replace(/\n$/, '').split('\n').length;
    const size = `${lines} line${lines === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes`;
    const what =
      tool.name === 'edit_file'
        ? `edit ${showControls(diff.path)}${input.replace_all === true ? ' (every occurrence)' : ''}`
        : `write ${showControls(diff.path)}`;
    const heading = `${what}${tool.name === 'write_file' && !('note' in diff) ? ` (${diff.created ? 'a new file, ' : ''}${size})` : ''}`;
    if ('note' in diff) return `    ${dim(`${heading}: ${showControls(diff.note)}`)}\n`;
    const paint = (piece: string, line: string) =>
      !style ? piece : /^(---|\+\+\+) /.test(line) ? style.bold(piece) : diffColor(line, style)(piece);
    // The two file-name lines and the hunks: the diff is shown whole up to DIFF_PREVIEW_LINES of it.
    return `    ${dim(`${heading}:`)}\n${show(diff.lines, diff.lines.length, paint, DIFF_PREVIEW_LINES)}`;
  }
  if (tool.name === 'edit_file') {
    const lines = [
      ...text(input.old_string)
        .split('\n')
        .map((line) => `-${line}`),
      ...text(input.new_string)
        .split('\n')
        .map((line) => `+${line}`),
    ];
    return `    ${dim(`edit ${showControls(text(input.path))} (outside a repository: the text replaced, without line numbers):`)}\n${show(lines, lines.length, (piece, line) => (style ? diffColor(line, style)(piece) : piece))}`;
  }
  if (tool.name === 'write_file') {
    const content = text(input.content);
    const lines = content.replace(/\n$/, '').split('\n');
    return `    ${dim(`write ${showControls(text(input.path))} (${lines.length} line${lines.length === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes):`)}\n${show(lines, lines.length)}`;
  }
  return argumentsPreview(input, wrap, dim);
}

// Wraps one line of outside text into the question's lines: `lead` before its first piece.
type Wrap = (line: string, lead: string, paint: (piece: string, line: string) => string) => string[];

// The colour of a diff line, as paintDiff gives it, for each piece of the line once wrapped.
function diffColor(line: string, style: Style): (text: string) => string {
  if (!style.color) return (text) => text;
  if (line.startsWith('@@')) return style.cyan;
  if (line.startsWith('+')) return style.green;
  if (line.startsWith('-')) return style.red;
  return (text) => text;
}

// Every argument of a call (an MCP tool's), whole: a short value on its key's line as JSON, a long
// or many-line string below its key with its length, its text as it is (wrapped, never dropped),
// any other long value as indented JSON.
function argumentsPreview(input: Record<string, unknown>, wrap: Wrap, dim: (text: string) => string): string {
  const keys = Object.keys(input);
  if (keys.length === 0) return `    ${dim('(no arguments)')}\n`;
  const lines: string[] = [];
  for (const key of keys) {
    const value = input[key];
    const json = terminalJson(value) ?? 'undefined';
    const name = showControls(key);
    if (typeof value === 'string' && (value.includes('\n') || json.length > 60)) {
      lines.push(
        `    ${dim(`${name} (${value.length} character${value.length === 1 ? '' : 's'}${value.includes('\n') ? `, ${value.split('\n').length} lines` : ''}):`)}`,
      );
      for (const line of value.split('\n')) lines.push(...wrap(line, '  ', (piece) => piece));
    } else if (json.length <= 60 || typeof value !== 'object' || value === null) {
      lines.push(...wrap(`${name}: ${json}`, '', (piece) => piece));
    } else {
      lines.push(`    ${dim(`${name} (${json.length} characters of JSON):`)}`);
      for (const line of terminalJson(value, 2).split('\n')) lines.push(...wrap(line, '  ', (piece) => piece));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Where in the run a checkpoint is: "after step N", or "when the run started" for step 0. */
export function where(step: number): string {
  return step ? `after step ${step}` : 'when the run started';
}

/**
 * The drift question on a terminal: restore, keep, or quit. Ctrl-C stops like Ctrl-C anywhere.
 * `beforeAsk` takes what was typed before the question appeared (as for an approval): a "y" typed
 * early must not reset files the person has not yet seen listed.
 */
export async function askAboutDrift(
  question: { step: number; changes: Parameters<typeof describeChanges>[0] },
  live: LiveView,
  style: Style,
  stop: () => void,
  beforeAsk?: () => Promise<void>,
): Promise<'restore' | 'keep' | 'stop'> {
  await beforeAsk?.();
  live.out.write(
    style.yellow(
      `  The working tree differs from what the run recorded ${where(question.step)}: ${showControls(describeChanges(question.changes))}.\n`,
    ),
  );
  live.out.write(
    style.dim(
      '  A restore writes only the files the run wrote, saving your versions first (under refs/savepoint/saved/); keeping them tells the model which files you changed.\n',
    ),
  );
  live.pause();
  try {
    const answer = (
      await ask('  Restore the files as the run recorded them? [y]es, restore / [k]eep them as they are / [q]uit: ', { onInterrupt: stop })
    )
      .trim()
      .toLowerCase();
    if (answer.startsWith('y') || answer.startsWith('r')) return 'restore';
    return answer.startsWith('k') ? 'keep' : 'stop';
  } finally {
    live.resume();
  }
}

/**
 * No sandbox here: say so once, with how to get one, and ask before running commands unconfined;
 * only what is typed after the question answers it (`beforeAsk`, as for the drift question).
 */
export async function askToRunUnconfined(
  reason: string,
  remedy: string,
  out: Writable,
  style: Style,
  onInterrupt: () => void,
  beforeAsk?: () => Promise<void>,
): Promise<boolean> {
  await beforeAsk?.();
  out.write(style.yellow(`  Commands cannot run in a sandbox here: ${reason}. ${remedy}.\n`));
  const answer = (await ask('  Run commands unconfined, with your whole environment and file system? [y/N]: ', { onInterrupt }))
    .trim()
    .toLowerCase();
  return answer === 'y' || answer === 'yes';
}
