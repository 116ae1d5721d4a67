// Deltifying the journal's packs with git itself (pack-rollup.ts): `git pack-objects --stdin-packs`
// in a work directory of its own, at the lowest CPU priority, on one thread.
//
// Why --stdin-packs: git pairs objects for deltas by type, a hash of their path and size. Handed
// bare object ids, it knows no paths, and a journal's trees and step files (which differ from the
// version before by a line) are paired by size alone: a 4,000-step journal came to 7.6 MB that way
// against 2.5 MB for `git repack -a -d -f`. Handed the packs by name, git walks the commits in them
// to name every object, as `git repack --geometric` does, and reaches 2.6 MB with its default
// window and depth (a longer window gained nothing worth its time).
// Why --no-reuse-delta: with reuse, an object stored whole in a pack (every object of an append's
// pack, or of packs copied together) is copied as it is, never tried as a delta: the same journal
// came to 10.3 MB from undeltified packs with reuse, 2.6 MB without, in 0.9 s of one core.
import { copyFileSync, linkSync, mkdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { loosePath } from './git-object.js';
import { indexIds } from './pack-format.js';
import { startProcess } from '../os/processes.js';

/**
 * The configuration git would otherwise take from the user's repository and that changes what
 * pack-objects writes: a size limit would split the pack in several (the roll-up expects one), a
 * version-1 index is one the pack reader cannot read, a reverse index a file the roll-up would not
 * know to move or remove (a bitmap is written only when asked for), and a window or depth of 0,
 * passed as options below, would store every object whole. Nothing pack-objects reads runs code:
 * it runs no hooks, no filters, no textconv and no pager (its output is a pipe), and it asks
 * nothing (its input is the pack list).
 */
const PINNED_CONFIG = ['pack.packSizeLimit=0', 'pack.indexVersion=2', 'pack.writeReverseIndex=false', 'pack.compression=-1'];

/**
 * Runs `git pack-objects` over every object of the packs `packBases` (paths without `.pack`, in the
 * objects directory `objectsDir`'s pack/) and the loose objects `loose` of that directory,
 * deltified afresh against each other with the paths git finds for them, writing
 * `<work>/pack/pack-<id>.pack` and its .idx, and returns the id. Rejects when git fails.
 */
export async function packObjects(gitdir: string, objectsDir: string, work: string, packBases: string[], loose: string[]): Promise<string> {
  // git makes its temp pack in the object directory's pack/ whatever the base name, and a git left
  // running by a killed savepoint would leave it there (`git count-objects` garbage). So git's
  // object directory is the work directory, and the repository's objects its alternate: every
  // byte git writes stays in the work directory, removed whole (here, or by leftovers.ts).
  // `--unpacked` takes the loose objects of git's own object directory only (not an alternate's):
  // the loose objects to roll up are linked there, so that it takes exactly those.
  mkdirSync(join(work, 'pack'), { recursive: true });
  for (const oid of loose) {
    const [from, to] = [loosePath(objectsDir, oid), loosePath(work, oid)];
    mkdirSync(dirname(to), { recursive: true });
    try {
      linkSync(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error; // gone: the caller's check fails the roll-up
      copyFileSync(from, to); // a file system without hard links
    }
  }
  const packs = packBases.map((base) => `${basename(base)}.pack\n`).join('');
  try {
    return await runPackObjects(gitdir, objectsDir, work, ['--stdin-packs', '--unpacked'], packs);
  } catch (error) {
    // git before 2.32 has no --stdin-packs: the objects by id, without the paths that make deltas small.
    if (!(error instanceof PackObjectsError) || !/stdin-packs/.test(error.stderr)) throw error;
    const oids = new Set<string>(loose);
    for (const base of packBases) for (const oid of indexIds(readFileSync(`${base}.idx`))) oids.add(oid);
    return runPackObjects(gitdir, objectsDir, work, [], [...oids].map((oid) => `${oid}\n`).join(''));
  }
}

/** git pack-objects failed: its exit code and what it said. */
class PackObjectsError extends Error {
  readonly stderr: string;
  constructor(code: number | null, stderr: string) {
    super(`git pack-objects exited ${code}: ${stderr.trim()}`);
    this.stderr = stderr;
  }
}

function runPackObjects(gitdir: string, objectsDir: string, work: string, input: string[], stdin: string): Promise<string> {
  const env = { ...process.env, GIT_OBJECT_DIRECTORY: work, GIT_ALTERNATE_OBJECT_DIRECTORIES: objectsDir, GIT_TERMINAL_PROMPT: '0' };
  const config = PINNED_CONFIG.flatMap((setting) => ['-c', setting]);
  // git's default window and depth, whatever the repository's configuration says.
  const args = [
    `--git-dir=${gitdir}`,
    ...config,
    'pack-objects',
    '-q',
    ...input,
    '--no-reuse-delta',
    '--window=10',
    '--depth=50',
    '--threads=1',
    '--delta-base-offset',
    join(work, 'pack', 'pack'),
  ];
  return new Promise((resolve, reject) => {
    const { child } = startProcess('git', args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    // Background work: the run's own appends come first for the CPU (deltifying megabytes of
    // packs takes a core for a second or more). One delta thread (git's default is one a core), so
    // that a core stays free for the run: a 10,000-step live run took 31-32 s beside it, 35-38 s
    // beside git's two threads on two cores.
    try {
      if (child.pid) setPriority(child.pid, 19);
    } catch {
      // not permitted here: it runs at the usual priority
    }
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const id = out.trim();
      if (code === 0 && /^[0-9a-f]{40}$/.test(id)) resolve(id);
      else reject(new PackObjectsError(code, err));
    });
    child.stdin.on('error', () => {}); // a git that died early: its exit code says why
    child.stdin.end(stdin);
  });
}
