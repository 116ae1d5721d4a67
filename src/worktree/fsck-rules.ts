// What `git fsck --strict` (and so a host that checks pushes: receive.fsckObjects, as GitHub does)
// rejects in a tree, for the files a checkpoint is about to record: a `.gitmodules` that is a
// symbolic link, or whose submodules have a url or path that reads as an option, a url git
// disallows, an `update = !command` or a name with `..`; a `.gitattributes` with a line git cannot
// parse; and, to be safe, the other files git reads from a tree as symbolic links. Each is known
// by what it is to git (path-rules' gitReadFile: `.GITMODULES`, `GITMOD~1`, `.gitmodules.` and
// HFS+'s ignorable code points count). One such tree recorded and the journal could never be
// pushed again, even after the file is gone. A `.gitmodules` is read with git's own config parser.
import { gitReadFile } from '../git/path-rules.js';
import { runSync } from '../os/processes.js';

const REFUSED = 'which git fsck rejects (a host that checks pushes would refuse the journal)';
// attr.c's ATTR_MAX_LINE_LENGTH: fsck refuses a .gitattributes with a line this long or longer.
const ATTR_MAX_LINE_LENGTH = 2048;

/**
 * Why fsck would reject `path` recorded as a symbolic link (`symlink`) or a file holding
 * `content`, or undefined when it would not.
 */
export function fsckRefusal(path: string, entry: { symlink: true } | { content: Buffer }): string | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const name = gitReadFile(base);
  if (!name) return undefined;
  const spelled = base === name ? '' : ` (spelled ${JSON.stringify(base)})`;
  if ('symlink' in entry) return `a symbolic link named ${name}${spelled}, ${REFUSED}`;
  if (name === '.gitattributes')
    return longAttributeLine(entry.content)
      ? `a .gitattributes${spelled} with a line of ${ATTR_MAX_LINE_LENGTH} bytes or more, ${REFUSED}`
      : undefined;
  if (name !== '.gitmodules') return undefined;
  const values = configValues(entry.content);
  const what = `a .gitmodules${spelled}`;
  if (!values)
    return `${what} that git's config parser cannot read, which git fsck may reject in part (a host that checks pushes could refuse the journal)`;
  for (const [key, value] of values) {
    const match = /^submodule\.(.*)\.([^.]+)$/s.exec(key);
    if (!match) continue;
    const [, submodule, setting] = match as unknown as [string, string, string];
    if (submodule.split(/[/\\]/).includes('..')) return `${what} with a submodule name holding "..", ${REFUSED}`;
    if (setting === 'url' && badUrl(value)) return `${what} whose url reads as an option or is one git disallows, ${REFUSED}`;
    if (setting === 'path' && value.startsWith('-')) return `${what} whose path reads as an option, ${REFUSED}`;
    if (setting === 'update' && value.startsWith('!')) return `${what} whose update runs a command (!...), ${REFUSED}`;
  }
  return undefined;
}

// fsck.c's check_submodule_url, as far as it can be told from the text: an option (`-u./payload`),
// or a newline once %-escapes are decoded (git would hand it to a credential helper or a shell).
function badUrl(url: string): boolean {
  if (url.startsWith('-')) return true;
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // not valid %-escapes: git decodes byte by byte; a raw newline is looked for below as well
  }
  return /[\n\r]/.test(decoded) || /%0[ad]/i.test(url);
}

// fsck.c: every line shorter than ATTR_MAX_LINE_LENGTH bytes, up to the first NUL.
function longAttributeLine(content: Buffer): boolean {
  const end = content.indexOf(0);
  const text = end < 0 ? content : content.subarray(0, end);
  let start = 0;
  while (start <= text.length) {
    let eol = text.indexOf(10, start);
    if (eol < 0) eol = text.length;
    if (eol - start >= ATTR_MAX_LINE_LENGTH) return true;
    start = eol + 1;
  }
  return false;
}

// The key/value pairs of a config file as git itself parses them (`git config --file - --list`,
// which follows no includes), or undefined when git cannot parse it.
function configValues(content: Buffer): Array<[string, string]> | undefined {
  const result = runSync('git', ['config', '--file', '-', '--null', '--list'], {
    input: content,
    cwd: '/',
    stdio: ['pipe', 'pipe', 'ignore'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 || !result.stdout) return undefined;
  return result.stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((item) => {
      const newline = item.indexOf('\n');
      return newline < 0 ? [item, ''] : [item.slice(0, newline), item.slice(newline + 1)];
    });
}
