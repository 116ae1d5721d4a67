// Standard output and error as git treats them when the reader goes away (`savepoint log | head`):
// no stack trace, ever. A command that only reads the journal quits at once, silently, with
// status 141 (128 + SIGPIPE), which is what git's own commands end with there, and which a shell
// ignores unless `set -o pipefail`. A command that drives a run keeps running (its work is in the
// journal, not on the screen) and stops writing to the closed stream.
import type { Writable } from 'node:stream';

/** What a closed stdout or stderr does to the command: end it (reading commands) or be ignored (runs). */
export type ClosedPipePolicy = 'exit' | 'discard';

/** The exit status of a command whose reader closed the pipe: 128 + SIGPIPE, as git ends. */
export const CLOSED_PIPE_EXIT = 141;

let policy: ClosedPipePolicy = 'exit';
let installed = false;

/** Handles EPIPE (and any later write error) on stdout and stderr; call once, before any output. */
export function guardOutput(streams: Writable[] = [process.stdout, process.stderr]): void {
  if (installed) return;
  installed = true;
  for (const stream of streams) stream.on('error', (error: NodeJS.ErrnoException) => closed(stream, error));
}

/** Sets what a closed pipe does from now on (`discard` for the commands that drive a run). */
export function onClosedPipe(next: ClosedPipePolicy): void {
  policy = next;
}

function closed(stream: Writable, error: NodeJS.ErrnoException): void {
  // Nothing can be said on a broken stream; another kind of write error (a full disk) is as final.
  if (policy === 'exit') process.exit(error.code === 'EPIPE' ? CLOSED_PIPE_EXIT : 1);
  // Later writes go nowhere, and say so to their callbacks without another error event.
  stream.write = ((_chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done as () => void);
    return true;
  }) as Writable['write'];
}
