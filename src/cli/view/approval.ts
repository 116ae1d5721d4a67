// Asking a person before a live command or write. Replayed steps never ask: they do not run. The
// question shows what will happen (the whole command, the diff of an edit, the head of a write); a
// "no" may carry a reason, which the model reads in the declined result; Ctrl-C at the question
// stops the run like Ctrl-C anywhere (InterruptedError, exit 130). Settings' rules are asked
// before this (tool-call.ts), so a call a rule allows or denies never gets here; the mode from
// settings (`defaultMode`) approves edits, or everything, without asking; `a` offers to remember a
// rule for the session, or to write it to .savepoint/settings.local.json.
// The run's other two questions live here too: files that drifted from the journal (restore, keep or
// quit), and running commands unconfined where no sandbox can be had.
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { ApprovalRequiredError, describeChanges, InterruptedError } from '../../errors/index.js';
import type { Approver } from '../../agent/tool-call.js';
import type { AnyTool } from '../../tools/types.js';
import { ellipsize, showControls } from '../../format/text.js';
import { addLocalAllowRule, suggestRule, type PermissionMode, type PermissionRules } from '../../settings/index.js';
import { type Style } from '../terminal/style.js';
import { editPreview } from './edit-preview.js';
import type { LiveView } from './live-view.js';
import { paintDiff } from './step-diff.js';

/** How many lines of a command, or of a write's content outside a repository, the question shows. */
export const PREVIEW_LINES = 12;
/** How many lines of an edit's or a write's diff (file names and hunks) the question shows. */
export const DIFF_PREVIEW_LINES = 24;

/** What createApprover needs: the answers' source, where to ask, and what to do on Ctrl-C. */
export interface ApproverOptions {
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

/** `--yes` (or mode yes) approves everything; a terminal asks (y / n [reason] / a = remember a rule); otherwise a live step fails. */
export function createApprover(options: ApproverOptions): Approver {
  if (options.yes || options.mode === 'yes') return async () => true;
  const acceptsEdits = options.mode === 'acceptEdits';
  if (!options.interactive) {
    return async (tool, input) => {
      if (acceptsEdits && EDIT_TOOLS.has(tool.name)) return true;
      throw new ApprovalRequiredError(tool.describe(input));
    };
  }
  return async (tool, input) => {
    if (acceptsEdits && EDIT_TOOLS.has(tool.name)) return true;
    // A rule remembered earlier in this session (`a`): the same rules the tool call asked first.
    if (options.rules?.decide(tool.name, input)?.verdict === 'allow') return true;
    const output = options.output ?? process.stderr;
    options.onAsk?.(true, tool.describe(input));
    try {
      await options.beforeAsk?.();
      output.write(await preview(tool, input, options.style, options.root));
      const answer = (await ask(`  Allow ${showControls(tool.describe(input))}? [y]es / [n]o (a reason may follow: "n use pnpm") / [a]lways: `, options)).trim();
      const word = answer.toLowerCase().split(/\s+/)[0] ?? '';
      if (word === 'a' || word === 'always' || word === 'all') {
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

// `a`: the rule that allows calls like this one, for the rest of the session or written to the
// project's local settings (so the next session, and a run with no terminal, allows them too).
async function rememberRule(tool: string, input: Record<string, unknown>, options: ApproverOptions): Promise<void> {
  const rule = suggestRule(tool, input);
  const output = options.output ?? process.stderr;
  const where = options.root ? ' / [w]rite it to .savepoint/settings.local.json' : '';
  const answer = (await ask(`  Allow "${rule}" from now on: [s]ession only${where}: `, options)).trim().toLowerCase();
  options.rules?.addAllow(rule);
  if (!options.remembered?.includes(rule)) options.remembered?.push(rule);
  // Anything but w is the session only, and said so: an answer never changes settings silently.
  const written = options.root && (answer === 'w' || answer === 'write') ? addLocalAllowRule(options.root, rule) : undefined;
  const said = written ? `added "${rule}" to ${written}` : `allowed "${rule}" for this session only`;
  output.write(`    ${options.style ? options.style.dim(said) : said}\n`);
}

/** One question on the terminal; Ctrl-C (or the input closing) calls onInterrupt and rejects with InterruptedError. */
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
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
  });
}

/**
 * What the call will do, shown above the question: the command; for an edit or a write under
 * `root`, the real unified diff of the file as it is on disk now (as `savepoint show` prints the
 * step's diff afterwards), or why the call will fail; the head of a write when there is no root.
 */
export async function preview(tool: AnyTool, input: Record<string, unknown>, style?: Style, root?: string): Promise<string> {
  const dim = (text: string) => (style ? style.dim(text) : text);
  const width = style?.width ?? 100;
  // Every line is outside text (a command, a file's content): its controls are shown, then it is
  // cut to the width, its whitespace kept as it is (an indentation-only edit shows its indentation).
  const show = (lines: string[], total: number, paint: (line: string) => string = dim, most = PREVIEW_LINES) => {
    const shown = lines.slice(0, most).map((line) => `    ${paint(ellipsize(showControls(line), width - 6, 'columns') || ' ')}`);
    if (total > most) shown.push(`    ${dim(`… ${total - most} more line${total - most === 1 ? '' : 's'}`)}`);
    return `${shown.join('\n')}\n`;
  };
  // The model wrote all of it: every line goes through `show` (or showControls), never obeyed by the terminal.
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (tool.name === 'run_bash') {
    const lines = text(input.command).split('\n');
    return show(lines.map((line, i) => `${i === 0 ? '$ ' : '  '}${line}`), lines.length, (line) => line);
  }
  const diff = root ? await editPreview(root, tool.name, input) : undefined;
  if (diff) {
    const content = text(input.content);
    const lines = content.replace(/\n$/, '').split('\n').length;
    const size = `${lines} line${lines === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes`;
    const what = tool.name === 'edit_file' ? `edit ${showControls(diff.path)}${input.replace_all === true ? ' (every occurrence)' : ''}` : `write ${showControls(diff.path)}`;
    const heading = `${what}${tool.name === 'write_file' && !('note' in diff) ? ` (${diff.created ? 'a new file, ' : ''}${size})` : ''}`;
    if ('note' in diff) return `    ${dim(`${heading}: ${showControls(diff.note)}`)}\n`;
    const paint = (line: string) => (!style ? line : /^(---|\+\+\+) /.test(line) ? style.bold(line) : paintDiff(line, style));
    // The two file-name lines and the hunks: the diff is shown whole up to PREVIEW_LINES of it.
    return `    ${dim(`${heading}:`)}\n${show(diff.lines, diff.lines.length, paint, DIFF_PREVIEW_LINES)}`;
  }
  if (tool.name === 'edit_file') {
    const lines = [...text(input.old_string).split('\n').map((line) => `-${line}`), ...text(input.new_string).split('\n').map((line) => `+${line}`)];
    return `    ${dim(`edit ${showControls(text(input.path))} (outside a repository: the text replaced, without line numbers):`)}\n${show(lines, lines.length, (line) => (style ? paintDiff(line, style) : line))}`;
  }
  if (tool.name === 'write_file') {
    const content = text(input.content);
    const lines = content.replace(/\n$/, '').split('\n');
    return `    ${dim(`write ${showControls(text(input.path))} (${lines.length} line${lines.length === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes):`)}\n${show(lines, lines.length)}`;
  }
  return '';
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
export async function askAboutDrift(question: { step: number; changes: Parameters<typeof describeChanges>[0] }, live: LiveView, style: Style, stop: () => void, beforeAsk?: () => Promise<void>): Promise<'restore' | 'keep' | 'stop'> {
  await beforeAsk?.();
  live.out.write(style.yellow(`  The working tree differs from what the run recorded ${where(question.step)}: ${showControls(describeChanges(question.changes))}.\n`));
  live.out.write(style.dim('  A restore writes only the files the run wrote, saving your versions first (under refs/savepoint/saved/); keeping them tells the model which files you changed.\n'));
  live.pause();
  try {
    const answer = (await ask('  Restore the files as the run recorded them? [y]es, restore / [k]eep them as they are / [q]uit: ', { onInterrupt: stop })).trim().toLowerCase();
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
export async function askToRunUnconfined(reason: string, out: Writable, style: Style, onInterrupt: () => void, beforeAsk?: () => Promise<void>): Promise<boolean> {
  await beforeAsk?.();
  out.write(style.yellow(`  Commands cannot run in a sandbox here: ${reason}. Install it with "apt-get install bubblewrap" (Debian, Ubuntu) or "dnf install bubblewrap" (Fedora).\n`));
  const answer = (await ask('  Run commands unconfined, with your whole environment and file system? [y/N]: ', { onInterrupt })).trim().toLowerCase();
  return answer === 'y' || answer === 'yes';
}
