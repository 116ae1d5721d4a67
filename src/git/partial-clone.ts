// A partial clone (`git clone --filter=blob:none`) leaves objects out on purpose and marks the packs
// it fetched with a `.promisor` file; git fetches a left-out object from that remote when it is first
// read. The object store does the same through git itself, for the one object its own reader did
// not find: nothing else of the object store goes through git.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runSync } from '../os/processes.js';
import { hashObject, type ObjectType } from './git-object.js';

/**
 * Object `oid` read through `git cat-file`, which fetches it from the promisor remote, when the
 * repository whose git dir is `gitdir` is a partial clone; checked against its id like any object.
 * Undefined when it is not a partial clone, or git could not fetch it. Hooks and fsmonitor are off:
 * savepoint's own git commands run nothing a command could have planted.
 */
export function fetchLeftOut(gitdir: string, oid: string, expected: ObjectType): Buffer | undefined {
  if (!/^[0-9a-f]{40}$/.test(oid) || !isPartialClone(join(gitdir, 'objects'))) return undefined;
  const result = runSync(
    'git',
    ['--git-dir', gitdir, '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', 'cat-file', expected, oid],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1024 * 1024 * 1024,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    },
  );
  if (result.status !== 0 || !result.stdout) return undefined;
  return hashObject(expected, result.stdout) === oid ? result.stdout : undefined;
}

function isPartialClone(objectsDir: string): boolean {
  try {
    return readdirSync(join(objectsDir, 'pack')).some((name) => name.endsWith('.promisor'));
  } catch {
    return false;
  }
}
