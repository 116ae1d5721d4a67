// What `git fsck --strict` (and so a host that checks pushes: receive.fsckObjects, as GitHub does)
// rejects in a tree, for the files a checkpoint is about to record: a `.gitmodules` that is a
// symbolic link or names a url or path that reads as an option, and the other files git reads from
// a tree (`.gitattributes`, `.gitignore`, `.mailmap`) as symbolic links. One such tree recorded
// and the journal could never be pushed again, even after the file is gone. Pure code.

// The files git reads out of a tree, which fsck wants to be regular files.
const READ_BY_GIT = new Set(['.gitmodules', '.gitattributes', '.gitignore', '.mailmap']);

/**
 * Why fsck would reject `path` recorded as a symbolic link (`symlink`) or a file holding
 * `content`, or undefined when it would not.
 */
export function fsckRefusal(path: string, entry: { symlink: true } | { content: Buffer }): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  if (!READ_BY_GIT.has(name)) return undefined;
  if ('symlink' in entry) return `a symbolic link named ${name}, which git fsck rejects (a host that checks pushes would refuse the journal)`;
  if (name !== '.gitmodules') return undefined;
  const text = entry.content.toString('utf8');
  // `url = -...`, `path = -...` (git would pass them to a command as options), a name with `..`.
  if (/^\s*(url|path)\s*=\s*"?\s*-/im.test(text)) return 'a .gitmodules whose url or path reads as an option, which git fsck rejects (a host that checks pushes would refuse the journal)';
  if (/^\s*\[\s*submodule\s+"[^"]*(^|[/\\])\.\.([/\\]|")/im.test(text) || /^\s*\[\s*submodule\s+"\.\.("|[/\\])/im.test(text)) return 'a .gitmodules with a submodule name holding "..", which git fsck rejects (a host that checks pushes would refuse the journal)';
  return undefined;
}
