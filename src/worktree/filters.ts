// Clean and smudge filters (`filter=lfs` in .gitattributes, its commands in the config), as git
// applies them: a checkpoint records a filtered file in its clean form, as `git add` would (the
// index's blobs, which a checkpoint reuses for unchanged files, are in that form already), and a
// restore writes the smudged form, as `git checkout` would. Both go through git's own machinery
// (`git hash-object --path`, `git cat-file --filters`), run as savepoint's own git (buildOwnGit: no
// config from the environment), in the user's repository: only drivers its configuration defines
// count. The configuration of a git dir a command made (a nested repository) is never read here,
// and a .gitattributes a command wrote can only choose among the user's own drivers.
import { outputSync } from '../os/processes.js';
import { FilterFailedError } from '../errors/index.js';
import { buildOwnGit } from '../git/repository.js';
import { hasRawBytes, pathFromBytes, pathToBytes } from '../os/path-bytes.js';

/** Which files git filters, and their clean and smudged forms, for one working tree. */
export class WorktreeFilters {
  private readonly root: string;
  private drivers: Set<string> | undefined; // the filter drivers the configuration defines, read once

  constructor(root: string) {
    this.root = root;
  }

  /** Whether the configuration defines any filter driver at all (most repositories: none, and no more git is run). */
  get any(): boolean {
    this.drivers ??= this.readDrivers();
    return this.drivers.size > 0;
  }

  /** The paths of `paths` whose `filter` attribute names a driver the configuration defines. */
  filtered(paths: Iterable<string>): Set<string> {
    const found = new Set<string>();
    if (!this.any) return found;
    // A name that is not UTF-8 cannot be said on git's command line (--path): it is stored as it is.
    const list = [...paths].filter((path) => !hasRawBytes(path));
    if (list.length === 0) return found;
    const input = Buffer.concat(list.flatMap((path) => [pathToBytes(path), Buffer.of(0)]));
    const out = pathFromBytes(this.git(['check-attr', '-z', '--stdin', 'filter'], input));
    // `<path>\0filter\0<value>\0` for each path.
    const fields = out.split('\0');
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const value = fields[i + 2]!;
      if (this.drivers!.has(value)) found.add(fields[i]!);
    }
    return found;
  }

  /** `content` (the working-tree file at `path`) in its clean form, as `git add` stores it. */
  clean(path: string, content: Buffer): Buffer {
    try {
      // hash-object applies the clean filter for --path; -w stores the result, read back by its id.
      const oid = this.git(['hash-object', '-w', '--stdin', `--path=${path}`], content)
        .toString('latin1')
        .trim();
      return this.git(['cat-file', 'blob', oid]);
    } catch (error) {
      throw new FilterFailedError(path, 'clean', stderrOf(error), error);
    }
  }

  /** The blob `oid` (a checkpoint's, in this repository) in its working-tree form for `path`, as `git checkout` writes it. */
  smudge(path: string, oid: string): Buffer {
    try {
      return this.git(['cat-file', '--filters', `--path=${path}`, oid]);
    } catch (error) {
      throw new FilterFailedError(path, 'smudge', stderrOf(error), error);
    }
  }

  private readDrivers(): Set<string> {
    let out = '';
    try {
      out = this.git(['config', '-z', '--get-regexp', '^filter\\..*\\.(clean|smudge|process)$']).toString('utf8');
    } catch {
      return new Set(); // none defined (git exits 1)
    }
    const drivers = new Set<string>();
    for (const record of out.split('\0')) {
      const key = record.split('\n')[0]!;
      const name = /^filter\.(.+)\.(clean|smudge|process)$/.exec(key)?.[1];
      if (name) drivers.add(name);
    }
    return drivers;
  }

  private git(args: string[], input?: Buffer): Buffer {
    const git = buildOwnGit(args);
    return outputSync('git', git.args, {
      cwd: this.root,
      env: git.env,
      input,
      maxBuffer: 1 << 30,
      stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
  }
}

// What a failed git command said on stderr (the filter's own message is there), as one line.
function stderrOf(error: unknown): string {
  const stderr = (error as { stderr?: Buffer | string }).stderr;
  const text = stderr === undefined ? (error as Error).message : stderr.toString();
  return text.trim().replace(/\s*\n\s*/g, ' ');
}
