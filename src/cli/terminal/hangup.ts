// A terminal that hangs up under savepoint (its window closed, an SSH connection dropped): the
// process must still end as itself. As Node 20 exits it sets each standard descriptor that was a
// terminal at its start back to the mode it found (ResetStdio), and aborts when that fails: on a
// terminal that hung up it fails (EIO), so every session whose window was closed died of SIGABRT
// (exit 134, and a core dump where the system keeps them: systemd-coredump, apport) after its own
// orderly end. nodejs/node#51519; Node fixed it after 20.20 (#58200). A hung-up terminal has no
// mode to restore, so its descriptors are closed as the process exits, last, and Node passes over
// a closed one.

import { closeSync } from 'node:fs';
import { isatty } from 'node:tty';

/**
 * Notes which of stdin, stdout and stderr are terminals now, and as the process exits closes those
 * that no longer are (hung up), so that Node's own restore of their mode skips them. Call once, at
 * the start; what it costs is three ioctls.
 */
export function endCleanlyAfterHangup(): void {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  if (!terminals.length) return;
  process.on('exit', () => {
    for (const fd of terminals) {
      if (isatty(fd)) continue; // still answering: Node restores its mode
      try {
        closeSync(fd);
      } catch {
        // closed already
      }
    }
  });
}

/** Whether stdin was a terminal that has hung up since (it answers no terminal request now). */
export function stdinHungUp(): boolean {
  return !isatty(0);
}
