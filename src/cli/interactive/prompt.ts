// The prompt of an interactive session: one line read with Node's own readline (line editing,
// history with the arrow keys, kept across the turns of the session). A new interface is opened
// for each line and closed before the turn runs, so that the turn's own questions (approvals,
// drift) and Ctrl-C (SIGINT, the terminal back in its normal mode) work exactly as in `run`.
import { createInterface } from 'node:readline';

/** What the person did at the prompt: a line, or leave (Ctrl-C on an empty line, Ctrl-D). */
export type PromptAnswer = { line: string } | { leave: true };

/** The lines typed so far, newest first (readline's order), shared by every prompt of a session. */
export type PromptHistory = string[];

/** The most lines of history kept. */
export const HISTORY_SIZE = 500;

/** Reads one line at `prompt`. Ctrl-C on a line with text clears it; on an empty line, or Ctrl-D, leaves. */
export function readPromptLine(prompt: string, history: PromptHistory, io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream } = {}): Promise<PromptAnswer> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.input ?? process.stdin, output: io.output ?? process.stdout, terminal: true, history: [...history], historySize: HISTORY_SIZE, removeHistoryDuplicates: true, prompt });
    let done = false;
    const finish = (answer: PromptAnswer) => {
      if (done) return;
      done = true;
      history.splice(0, history.length, ...(rl as unknown as { history: string[] }).history);
      rl.close();
      resolve(answer);
    };
    rl.on('line', (line) => finish({ line }));
    rl.on('close', () => finish({ leave: true }));
    rl.on('SIGINT', () => {
      if (rl.line.length === 0) {
        (io.output ?? process.stdout).write('\n');
        return finish({ leave: true });
      }
      // The typed line is dropped (end of line, then delete to its start); a second Ctrl-C leaves.
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
    });
    rl.prompt();
  });
}
