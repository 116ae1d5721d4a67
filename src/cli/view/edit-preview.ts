// The diff an approval question shows for edit_file and write_file: the change the tool will make,
// computed on the file as it is on disk now (edit_file's own applyEdit), and diffed by git itself
// with the repository's own diff settings, so the hunks, their file line numbers and their
// indentation are the ones `savepoint show` prints for the step afterwards (a checkpoint diffed by
// `git diff`). A file that does not exist yet shows as new (`--- /dev/null`, `@@ -0,0 +1,n @@`).
import { lstat, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildOwnGit, findRepository } from '../../git/repository.js';
import { runProcess } from '../../os/processes.js';
import { applyEdit } from '../../tools/edit-file.js';
import { resolveInRepo, toRepoRelative } from '../../tools/path-utils.js';

/** What the question shows for an edit or a write: the diff's lines, or instead a note (why the call will fail, or why no diff is shown). */
export type EditPreview = { path: string; lines: string[]; created: boolean } | { path: string; note: string };

/** The largest file (before or after) the question diffs: a bigger one is described, not copied twice to diff. */
export const MAX_PREVIEW_BYTES = 16 * 1024 * 1024;

/** The diff `tool` (edit_file or write_file) would make to the file under `root`, or undefined for other tools. */
export async function editPreview(root: string, tool: string, input: Record<string, unknown>): Promise<EditPreview | undefined> {
  if (tool !== 'edit_file' && tool !== 'write_file') return undefined;
  const given = typeof input.path === 'string' ? input.path : '';
  let file: string;
  let path: string;
  try {
    file = resolveInRepo(root, given);
    path = toRepoRelative(root, file);
  } catch (error) {
    return { path: given, note: `it will fail: ${(error as Error).message}` };
  }
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  const content = typeof input.content === 'string' ? Buffer.byteLength(input.content) : 0;
  if (Math.max(size, content) > MAX_PREVIEW_BYTES)
    return {
      path,
      note: `${path} is over ${MAX_PREVIEW_BYTES / 1024 / 1024} MB: no diff here (savepoint show prints it once the step has run)`,
    };
  // The bytes as they are: the diff then shows what the write really does to them.
  const before = await readFile(file).catch((error: NodeJS.ErrnoException) => error);
  const missing = before instanceof Error && before.code === 'ENOENT';
  if (before instanceof Error && !missing) {
    const directory = await stat(file).then(
      (s) => s.isDirectory(),
      () => false,
    );
    return {
      path,
      note: `it will fail: ${directory ? `${path} is a directory` : `${path} cannot be read (${before.code ?? before.message})`}`,
    };
  }
  let after: string;
  if (tool === 'edit_file') {
    if (missing) return { path, note: `it will fail: ${path} does not exist (edit_file changes an existing file)` };
    const edit = applyEdit((before as Buffer).toString('utf8'), {
      path,
      old_string: String(input.old_string ?? ''),
      new_string: String(input.new_string ?? ''),
      replace_all: input.replace_all === true,
    });
    if ('error' in edit) return { path, note: `it will fail: ${edit.error}` };
    after = edit.after;
  } else {
    after = typeof input.content === 'string' ? input.content : '';
  }
  const diff = await gitDiff(root, path, missing ? null : (before as Buffer), after);
  if (diff.error) return { path, note: diff.error };
  return { path, lines: diff.lines, created: missing };
}

// `git diff --no-index --no-prefix` of the two contents, written to a private temporary folder as
// `a/<path>` and `b/<path>`: git itself then names the file in its `---` / `+++` lines (quoted as it
// quotes one), as `git diff` names it in the step's checkpoint. It reads the repository's config
// (diff.algorithm, diff.indentHeuristic, core.quotePath) through GIT_DIR, and the working tree's
// .gitattributes on the file's path, copied beside each side (a file marked `-diff` or `binary`
// shows as "Binary files … differ"), as `show` diffs with them.
async function gitDiff(root: string, path: string, before: Buffer | null, after: string): Promise<{ lines: string[]; error?: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'savepoint-approval-'));
  try {
    const [a, b] = [before === null ? '/dev/null' : `a/${path}`, `b/${path}`];
    const attributes = await attributesOnPath(root, path);
    for (const [side, name, content] of [
      ['a', a, before],
      ['b', b, after],
    ] as const) {
      if (content === null) continue;
      await mkdir(dirname(join(dir, name)), { recursive: true });
      for (const [folder, rules] of attributes) {
        await mkdir(join(dir, side, folder), { recursive: true });
        await writeFile(join(dir, side, folder, '.gitattributes'), rules);
      }
      await writeFile(join(dir, name), content); // after the rules: a diff of .gitattributes itself keeps its own sides
    }
    const git = buildOwnGit(['diff', '--no-index', '--no-prefix', '--no-ext-diff', '--no-textconv', '--no-color', '--', a, b]);
    const env = { ...git.env, GIT_DIR: findRepository(root, git.env).gitdir, GIT_PAGER: 'cat' };
    const result = await runProcess('git', git.args, { cwd: dir, env, maxBuffer: 256 * 1024 * 1024 });
    // --no-index exits 1 when the files differ, 0 when they are the same.
    if (result.code !== 0 && result.code !== 1) {
      const why = result.overflow ? 'its output passed 256 MB' : (result.error?.message ?? `exit ${result.code ?? result.signal}`);
      return { lines: [], error: `git could not diff it (${result.stderr.toString('utf8').trim().split('\n')[0] || why})` };
    }
    const text = result.stdout.toString('utf8');
    if (!text) return { lines: ['(no change: the file already holds exactly this)'] };
    // From the file names on: the `diff --git`, mode and index lines name the temporary files.
    const lines = text.replace(/\n$/, '').split('\n');
    const first = lines.findIndex((line) => line.startsWith('--- ') || line.startsWith('Binary files '));
    return { lines: lines.slice(first < 0 ? 0 : first) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// A .gitattributes larger than this is left out of the question's diff (outside input, sized
// before it is read: real ones are a few KB; git's own limit is 100 MB).
const MAX_ATTRIBUTES_BYTES = 1024 * 1024;

// The .gitattributes files of the working tree that apply to `path` (repository-relative, `/`
// separated): the root's and each folder's on the way down, as [folder, content]. Only regular
// files are read, as git reads them (a symlinked .gitattributes is ignored by git since 2.32).
async function attributesOnPath(root: string, path: string): Promise<Array<[string, Buffer]>> {
  const parts = path.split('/').slice(0, -1);
  const folders = ['', ...parts.map((_, i) => parts.slice(0, i + 1).join('/'))];
  const found: Array<[string, Buffer]> = [];
  for (const folder of folders) {
    const file = join(root, folder, '.gitattributes');
    const info = await lstat(file).catch(() => undefined);
    if (!info?.isFile() || info.size > MAX_ATTRIBUTES_BYTES) continue;
    const rules = await readFile(file).catch(() => undefined);
    if (rules) found.push([folder, rules]);
  }
  return found;
}
