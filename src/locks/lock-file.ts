// What the journal's lock files (a run's, the roll-ups') share: reading one that may be gone, and
// taking over one whose holder is dead without ever removing a live holder's.
import { linkSync, readFileSync, renameSync } from 'node:fs';
import { unlinkQuietly } from '../os/durable-file.js';

/** The text of the file at `path`, or undefined when it cannot be read (gone in between). */
export function readQuietly(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Takes over the lock file at `path`, read as `seen` from a holder found dead: moves it aside and
 * says whether it was taken. If, in the instant between reading and moving, a live process had
 * replaced it, or `revived(aside)` says its holder renewed it meanwhile, it is put back (linked:
 * only if no other lock is there by then). Two processes that both found it dead cannot remove
 * each other's fresh lock: the second rename finds nothing, or another content.
 */
export function takeOverLock(path: string, seen: string, revived: (aside: string) => boolean = () => false): boolean {
  const aside = `${path}.dead-${process.pid}-${Date.now()}`;
  try {
    renameSync(path, aside);
  } catch {
    return false; // someone else took it over first
  }
  const taken = readQuietly(aside) === seen && !revived(aside);
  if (!taken) {
    try {
      linkSync(aside, path);
    } catch {
      // someone else holds it now; their claim stands
    }
  }
  unlinkQuietly(aside);
  return taken;
}
