// The diff an approval question shows for edit_file and write_file: the change the tool will make,
// computed on the file as it is on disk now (edit_file's own applyEdit), and diffed by git itself
// with the repository's own diff settings, so the hunks, their file line numbers and their
// indentation are the ones `savepoint show` prints for the step afterwards (a checkpoint diffed by
// `git diff`). A file that does not exist yet shows as new (`--- /dev/null`, `@@ -0,0 +1,n @@`).
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOwnGit } from '../../git/repository.js';
import { applyEdit } from '../../tools/edit-file.js';
import { resolveInRepo, toRepoRelative } from '../../tools/path-utils.js';

/** What the question shows for an edit or a write: the diff's lines, or why the call will fail. */
export type EditPreview = { path: string; lines: string[]; created: boolean } | { path: string; failure: string };

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
    return { path: given, failure: `it will fail: ${(error as Error).message}` };
  }
  // The bytes as they are: the diff then shows what the write really does to them.
  const before = await readFile(file).catch((error: NodeJS.ErrnoException) => error);
  const missing = before instanceof Error && before.code === 'ENOENT';
  if (before instanceof Error && !missing) {
    const directory = await stat(file).then((s) => s.isDirectory(), () => false);
    return { path, failure: `it will fail: ${directory ? `${path} is a directory` : `${path} cannot be read (${before.code ?? before.message})`}` };
  }
  let after: string;
  if (tool === 'edit_file') {
    if (missing) return { path, failure: `it will fail: ${path} does not exist (edit_file changes an existing file)` };
    const edit = applyEdit((before as Buffer).toString('utf8'), { path, old_string: String(input.old_string ?? ''), new_string: String(input.new_string ?? ''), replace_all: input.replace_all === true });
    if ('error' in edit) return { path, failure: `it will fail: ${edit.error}` };
    after = edit.after;
  } else {
    after = typeof input.content === 'string' ? input.content : '';
  }
  const diff = await gitDiff(root, missing ? null : (before as Buffer), after);
  if (diff.error) return { path, failure: diff.error };
  return { path, lines: withHeaders(diff.text, path, missing), created: missing };
}

// `git diff --no-index` of the two contents, written to a private temporary folder. It runs in the
// repository, so its config (diff.algorithm, diff.indentHeuristic) is the config `show` diffs with.
async function gitDiff(root: string, before: Buffer | null, after: string): Promise<{ text: string; error?: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'savepoint-approval-'));
  try {
    const [a, b] = [before === null ? '/dev/null' : join(dir, 'before'), join(dir, 'after')];
    if (before !== null) await writeFile(a, before);
    await writeFile(b, after);
    const { execa } = await import('execa'); // loaded on first use: most runs never ask
    const git = buildOwnGit(['diff', '--no-index', '--no-ext-diff', '--no-textconv', '--no-color', '--', a, b]);
    const result = await execa('git', git.args, { cwd: root, reject: false, stdin: 'ignore', stripFinalNewline: false, env: { ...git.env, GIT_PAGER: 'cat' }, extendEnv: false, maxBuffer: 256 * 1024 * 1024 });
    // --no-index exits 1 when the files differ, 0 when they are the same.
    if (result.exitCode !== 0 && result.exitCode !== 1) {
      return { text: '', error: `git could not diff it (${String(result.stderr).trim().split('\n')[0] || `exit ${result.exitCode}`})` };
    }
    return { text: String(result.stdout) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// The hunks as git made them, under the file's own names instead of the temporary ones: the
// `---` / `+++` lines `git diff` prints for the file in the step's checkpoint.
function withHeaders(text: string, path: string, created: boolean): string[] {
  const lines = text.replace(/\n$/, '').split('\n');
  const first = lines.findIndex((line) => line.startsWith('@@'));
  if (!text) return ['(no change: the file already holds exactly this)'];
  if (first < 0) return [lines.find((line) => line.startsWith('Binary files')) ? `Binary files ${created ? '/dev/null' : `a/${path}`} and b/${path} differ` : (lines.at(-1) ?? '')];
  return [created ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`, ...lines.slice(first)];
}
