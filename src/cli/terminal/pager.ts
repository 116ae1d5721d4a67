// Long output on a terminal goes through a pager, as git's does: $SAVEPOINT_PAGER, else $PAGER,
// else `less`, with LESS=FRX (quit if one screen, keep colours, leave the text on screen) and
// LV=-c unless the user set them. "cat" or an empty value means no pager; a pipe or a file never
// gets one. A pager that cannot start, or quits before reading everything, is not an error.
import { startProcess } from '../../os/processes.js';

/** The pager command for this environment, or undefined when paging is off. */
export function pagerCommand(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env.SAVEPOINT_PAGER ?? env.PAGER ?? 'less';
  const command = chosen.trim();
  return command === '' || command === 'cat' ? undefined : command;
}

/** The output stream a pager is wanted for: a terminal. */
export interface PagedStream {
  isTTY?: boolean;
  rows?: number;
  write(text: string): unknown;
}

/**
 * Writes `text` to `out`, through the pager when `out` is a terminal, paging is on and the text is
 * longer than the screen; resolves once the pager has quit.
 */
export async function writePaged(text: string, out: PagedStream = process.stdout, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const command = pagerCommand(env);
  const lines = text.split('\n').length - 1;
  if (!out.isTTY || !command || lines < (out.rows || 24)) {
    out.write(text);
    return;
  }
  const started = await runPager(command, text, { ...env, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' });
  if (!started) out.write(text);
}

// Runs `command` through the shell (so `less -S` or `delta --paging=always` work) with `text` on its
// stdin; false when it could not start.
function runPager(command: string, text: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    // Ctrl-C belongs to the pager while it runs (less uses it to stop a search), as in git.
    const ignore = () => {};
    process.on('SIGINT', ignore);
    const done = (started: boolean) => {
      process.off('SIGINT', ignore);
      resolve(started);
    };
    const { child, closed } = startProcess(command, [], { shell: true, stdio: ['pipe', 'inherit', 'inherit'], env });
    // It could not start, or the shell found no such command (127).
    void closed.then((end) => done(!end.error && end.code !== 127));
    child.stdin!.on('error', () => {}); // the pager quit early (q in less): fine
    child.stdin!.end(text);
  });
}
