// Asking a person before a live command or write. Replayed steps never ask: they do not run. The
// question shows what will happen (the whole command, the diff of an edit, the head of a write); a
// "no" may carry a reason, which the model reads in the declined result; Ctrl-C at the question
// stops the run like Ctrl-C anywhere (InterruptedError, exit 130).
import { createInterface } from 'node:readline';
import { createPatch } from 'diff';
import { ApprovalRequiredError, InterruptedError } from '../../errors/index.js';
import type { Approver } from '../../agent/tool-call.js';
import type { AnyTool } from '../../tools/types.js';
import { fitColumns } from '../../format/text.js';
import { type Style } from '../terminal/style.js';

/** How many lines of a write's content, or of an edit's diff, the question shows. */
export const PREVIEW_LINES = 12;

/** What createApprover needs: the answers' source, where to ask, and what to do on Ctrl-C. */
export interface ApproverOptions {
  yes: boolean;
  interactive: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  style?: Style;
  /** Called before asking (with what is asked about) and after the answer (a live view takes its block away meanwhile). */
  onAsk?: (asking: boolean, what?: string) => void;
  /** Ctrl-C at the question: stop the run (the caller aborts it) before the question fails. */
  onInterrupt?: () => void;
}

/** `--yes` approves everything; a terminal asks (y / n [reason] / a = yes to all); otherwise a live step fails. */
export function createApprover(options: ApproverOptions): Approver {
  if (options.yes) return async () => true;
  if (!options.interactive) {
    return async (tool, input) => {
      throw new ApprovalRequiredError(tool.describe(input));
    };
  }
  let all = false;
  return async (tool, input) => {
    if (all) return true;
    const output = options.output ?? process.stderr;
    options.onAsk?.(true, tool.describe(input));
    try {
      output.write(preview(tool, input, options.style));
      const answer = (await ask(`  Allow ${tool.describe(input)}? [y]es / [n]o (a reason may follow: "n use pnpm") / [a]ll: `, options)).trim();
      const word = answer.toLowerCase().split(/\s+/)[0] ?? '';
      if (word === 'a' || word === 'all') all = true;
      if (all || word === 'y' || word === 'yes') return true;
      const reason = /^(n|no)\b[\s,:;.-]*/i.test(answer) ? answer.replace(/^(n|no)\b[\s,:;.-]*/i, '') : word === '' ? '' : answer;
      return reason ? { reason } : false;
    } finally {
      options.onAsk?.(false);
    }
  };
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

/** What the call will do, shown above the question: the command, the edit's diff, the write's head. */
export function preview(tool: AnyTool, input: Record<string, unknown>, style?: Style): string {
  const dim = (text: string) => (style ? style.dim(text) : text);
  const width = style?.width ?? 100;
  const show = (lines: string[], total: number, paint: (line: string) => string = dim) => {
    const shown = lines.slice(0, PREVIEW_LINES).map((line) => `    ${paint(fitColumns(line, width - 6) || ' ')}`);
    if (total > PREVIEW_LINES) shown.push(`    ${dim(`… ${total - PREVIEW_LINES} more line${total - PREVIEW_LINES === 1 ? '' : 's'}`)}`);
    return `${shown.join('\n')}\n`;
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (tool.name === 'run_bash') {
    const lines = text(input.command).split('\n');
    return show(lines.map((line, i) => `${i === 0 ? '$ ' : '  '}${line}`), lines.length, (line) => line);
  }
  if (tool.name === 'edit_file') {
    const patch = createPatch(text(input.path), text(input.old_string), text(input.new_string), '', '', { context: 2 }).split('\n').slice(4).filter((line) => line !== '\\ No newline at end of file');
    while (patch.at(-1) === '') patch.pop();
    const paint = (line: string) => (!style ? line : line.startsWith('+') ? style.green(line) : line.startsWith('-') ? style.red(line) : style.dim(line));
    return `    ${dim(`edit ${text(input.path)}${input.replace_all ? ' (every occurrence)' : ''}:`)}\n${show(patch, patch.length, paint)}`;
  }
  if (tool.name === 'write_file') {
    const content = text(input.content);
    const lines = content.replace(/\n$/, '').split('\n');
    return `    ${dim(`write ${text(input.path)} (${lines.length} line${lines.length === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes):`)}\n${show(lines, lines.length)}`;
  }
  return '';
}
