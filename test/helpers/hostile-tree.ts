// Forging journals the way someone with push access could: trees git's own plumbing accepts
// (`git mktree` takes `.git`, `..`, duplicate names and odd modes; `git hash-object --literally`
// takes anything) and a commit on agent-journal that makes such a tree the last checkpoint of a run.
//
//   const tree = await mktree(root, [{ mode: '040000', name: '..', oid: await mktree(root, [...]) }]);
//   await forgeLastCheckpoint(root, run, tree);
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitOut } from './git.js';

/** One entry for mktree: type is worked out from the mode. */
export interface ForgedEntry {
  mode: string;
  name: string;
  oid: string;
}

/** Stores `content` as a blob in the repository at `cwd`. */
export function hashBlob(cwd: string, content: string): Promise<string> {
  return gitOut(cwd, ['hash-object', '-w', '--stdin'], { input: content });
}

const typeOf = (mode: string) => (mode === '040000' || mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob');

/** Builds a tree with `git mktree` (which does not apply git's path rules). */
export function mktree(cwd: string, entries: ForgedEntry[]): Promise<string> {
  const input = entries.map((e) => `${e.mode} ${typeOf(e.mode)} ${e.oid}\t${e.name}\0`).join('');
  return gitOut(cwd, ['mktree', '-z', '--missing'], { input });
}

/** Builds a tree object byte by byte (any name, even one with a slash), with `hash-object --literally`. */
export async function literalTree(cwd: string, entries: ForgedEntry[]): Promise<string> {
  const body = Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, 'hex')])));
  const { execFileSync } = await import('node:child_process');
  return execFileSync('git', ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], { cwd, input: body, encoding: 'utf8' }).trim();
}

async function lsTree(cwd: string, tree: string): Promise<ForgedEntry[]> {
  const out = await gitOut(cwd, ['ls-tree', '-z', tree]);
  return out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, name] = [line.slice(0, line.indexOf('\t')), line.slice(line.indexOf('\t') + 1)];
      const [mode, , oid] = meta.split(' ');
      return { mode: mode!, name, oid: oid! };
    });
}

// `tree` with the entry at `path` (slash-separated) replaced by `entry`.
async function setPath(cwd: string, tree: string, path: string[], entry: Omit<ForgedEntry, 'name'>): Promise<string> {
  const [name, ...rest] = path;
  const entries = (await lsTree(cwd, tree)).filter((e) => e.name !== name);
  const old = (await lsTree(cwd, tree)).find((e) => e.name === name);
  const replaced = rest.length ? { mode: '040000', oid: await setPath(cwd, old!.oid, rest, entry) } : entry;
  return mktree(cwd, [...entries, { ...replaced, name: name! }]);
}

/**
 * Commits onto agent-journal (in the repository at `cwd`) a rewrite of run `run`'s last step that
 * has a checkpoint, pointing that checkpoint at `checkpoint` (also placed at runs/<run>/worktree),
 * as a collaborator with push access could. Returns the step rewritten.
 */
export async function forgeLastCheckpoint(cwd: string, run: string, checkpoint: string): Promise<number> {
  const tip = await gitOut(cwd, ['rev-parse', 'agent-journal']);
  const files = (await gitOut(cwd, ['ls-tree', '-r', '--name-only', tip, `runs/${run}/steps/`])).split('\n').sort();
  for (const file of files.reverse()) {
    const entry = JSON.parse(await gitOut(cwd, ['show', `${tip}:${file}`])) as { checkpoint?: string; step: number };
    if (!entry.checkpoint) continue;
    entry.checkpoint = checkpoint;
    const blob = await hashBlob(cwd, `${JSON.stringify(entry, null, 2)}\n`);
    let tree = await gitOut(cwd, ['rev-parse', `${tip}^{tree}`]);
    tree = await setPath(cwd, tree, file.split('/'), { mode: '100644', oid: blob });
    tree = await setPath(cwd, tree, ['runs', run, 'worktree'], { mode: '040000', oid: checkpoint });
    const commit = await gitOut(cwd, ['commit-tree', tree, '-p', tip, '-m', `${run} #${entry.step} (rewritten)`]);
    await gitOut(cwd, ['update-ref', 'refs/heads/agent-journal', commit, tip]);
    return entry.step;
  }
  throw new Error(`run ${run} has no step with a checkpoint`);
}

/**
 * Commits onto agent-journal (in the repository at `cwd`) the file at `path` (slash-separated, from
 * the branch's root) replaced by `content`, as a collaborator with push access could. Returns the
 * new tip.
 */
export async function forgeJournalFile(cwd: string, path: string, content: string | Buffer): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd, input: content, encoding: 'utf8' }).trim();
  return forgeJournalBlob(cwd, path, blob);
}

/**
 * Stores as a blob, in the repository at `cwd`, what the shell pipeline `producer` writes (for
 * example `head -c 209715200 /dev/zero`), streamed into git: the test never holds it in memory.
 */
export async function streamBlob(cwd: string, producer: string): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  return execFileSync('sh', ['-c', `${producer} | git hash-object -w --stdin`], { cwd, encoding: 'utf8' }).trim();
}

/** Commits onto agent-journal the file at `path` replaced by the blob `blob` already stored (see forgeJournalFile). */
export async function forgeJournalBlob(cwd: string, path: string, blob: string): Promise<string> {
  const tip = await gitOut(cwd, ['rev-parse', 'agent-journal']);
  const tree = await setPath(cwd, await gitOut(cwd, ['rev-parse', `${tip}^{tree}`]), path.split('/'), { mode: '100644', oid: blob });
  const commit = await gitOut(cwd, ['commit-tree', tree, '-p', tip, '-m', `${path} (rewritten)`]);
  await gitOut(cwd, ['update-ref', 'refs/heads/agent-journal', commit, tip]);
  return commit;
}

/** Rewrites the JSON file at `path` on agent-journal through `change` (see forgeJournalFile). */
export async function forgeJournalJson(cwd: string, path: string, change: (value: Record<string, unknown>) => void): Promise<string> {
  const value = JSON.parse(await gitOut(cwd, ['show', `agent-journal:${path}`])) as Record<string, unknown>;
  change(value);
  return forgeJournalFile(cwd, path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A project repository at `<dir>/a` with one commit (a README), in a new folder `dir` made by
 * `makeDir`: the place a hostile test records a run, pushes its journal beside it, or clones it.
 */
export async function projectAt(makeDir: () => string): Promise<{ dir: string; root: string }> {
  const dir = makeDir();
  const root = join(dir, 'a');
  mkdirSync(root);
  await gitOut(root, ['init', '-q', '-b', 'main']);
  writeFileSync(join(root, 'README.md'), '# project\n');
  await gitOut(root, ['add', '-A']);
  await gitOut(root, ['commit', '-q', '-m', 'the project']);
  return { dir, root };
}
