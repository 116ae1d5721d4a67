// The house rules of src/ that a reader relies on, checked on the files themselves: no two folders
// that import each other (nor any circle of folders), the floors under the valve importing nothing above them, every dependency used through its public
// paths only (no `_vendor`, `internal`, `core/`), child processes started in one module
// (os/processes.ts), and every name the library exports carrying its
// `/** */` doc, every error class among them and no store internal or test hook. A move or a new
// file that breaks one fails here, naming it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

// The specifiers a TypeScript file imports or re-exports (static and dynamic).
function specifiers(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
}

const sources = filesUnder(src).filter((file) => file.endsWith('.ts'));
const folderOf = (file: string) => relative(src, dirname(file)) || '.';

// Folder -> the other folders of src/ it imports, with one file that does, for the message.
const edges = new Map<string, Map<string, string>>();
for (const file of sources) {
  for (const spec of specifiers(file).filter((s) => s.startsWith('.'))) {
    const [from, to] = [folderOf(file), folderOf(resolve(dirname(file), spec))];
    if (from === to) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from)!.has(to)) edges.get(from)!.set(to, relative(src, file));
  }
}

test('no two folders import each other, and no circle of folders imports itself', () => {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (folder: string) => {
    state.set(folder, 'open');
    path.push(folder);
    for (const next of edges.get(folder)?.keys() ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].map((f, i, all) => (i < all.length - 1 ? `${f} (${edges.get(f)!.get(all[i + 1]!)})` : f)).join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(folder, 'done');
  };
  for (const folder of [...edges.keys()].sort()) if (!state.has(folder)) visit(folder);
  assert.deepEqual(circles, []);
});

// The floors from the journal of runs down (docs/architecture.md): each imports only floors below it.
const FLOORS = [['journal'], ['git'], ['locks'], ['os'], ['errors', 'format']];

test('the journal of runs, the git store, locks and os import nothing above them', () => {
  const above: string[] = [];
  FLOORS.forEach((floor, level) => {
    const below = new Set(FLOORS.slice(level + 1).flat());
    for (const folder of floor) for (const [to, file] of edges.get(folder) ?? []) if (!below.has(to)) above.push(`${folder} -> ${to} (${file})`);
  });
  assert.deepEqual(above, []);
});

test('every dependency is imported through its public paths (no _vendor, internal or core/)', () => {
  const code = ['src', 'test', 'bench', 'scripts', 'examples', 'bin'].flatMap((dir) => filesUnder(join(root, dir))).filter((file) => /\.(ts|js|mjs)$/.test(file));
  const private_ = code.flatMap((file) => specifiers(file).filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:') && /(^|\/)(_vendor|internal|core)(\/|$)/.test(spec)).map((spec) => `${relative(root, file)}: ${spec}`));
  assert.deepEqual(private_, []);
});

// The one module that starts child processes (start, timeout, group kill, reap), and the one file
// that names child_process without importing it: the MCP stdio guard's script, run by `node -e` as a
// program of its own outside savepoint's modules (tools/mcp/stdio-guard.ts says why).
const PROCESS_MODULE = 'os/processes.ts';
const GUARD_SCRIPT = 'tools/mcp/stdio-guard.ts';

test('child processes are started in one place: no file of src/ but os/processes.ts imports child_process or execa', () => {
  const starters = sources.flatMap((file) => {
    const name = relative(src, file);
    if (name === PROCESS_MODULE) return [];
    const text = readFileSync(file, 'utf8');
    const required = name === GUARD_SCRIPT ? [] : [...text.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
    return [...specifiers(file), ...required].filter((spec) => /^(node:)?child_process$|^execa(\/|$)/.test(spec)).map((spec) => `${name}: ${spec}`);
  });
  assert.deepEqual(starters, []);
  assert.match(readFileSync(join(src, PROCESS_MODULE), 'utf8'), /from 'node:child_process'/, 'the process module itself is where they are');
});

const program = ts.createProgram([join(src, 'index.ts')], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true });
const checker = program.getTypeChecker();
const exportsOf = (file: string) => checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(join(src, file))!)!);

test('every name the library exports (src/index.ts) carries its /** */ doc', () => {
  const exports = exportsOf('index.ts');
  assert.ok(exports.length > 50, 'the exports were read');
  const undocumented = exports.filter((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    return !(symbol.declarations ?? []).some((d) => ts.getJSDocCommentsAndTags(ts.isVariableDeclaration(d) ? d.parent.parent : d).length > 0);
  });
  assert.deepEqual(undocumented.map((symbol) => symbol.name), []);
});

// What errors/ exports for savepoint's own use: turning a file-system error into one of its errors.
const ERROR_HELPERS = ['asWriteFailure', 'noFilesLeftCode', 'DISK_FULL_CODES', 'WRITE_REFUSED_CODES', 'NO_FILES_LEFT_CODES', 'describeChanges', 'stopSignalWords'];
// Test hooks and store internals (issue 19): what a user never builds with.
const INTERNALS = ['JournalStore', 'ObjectStore', 'StoreOptions', 'FaultPoint', 'RefFaultPoint', 'canonicalJson', 'findRepository', 'RunRecordWriter', ...ERROR_HELPERS];

test('the library exports every error class and none of the store internals, test hooks or error helpers', () => {
  const exported = new Set(exportsOf('index.ts').map((symbol) => symbol.name));
  const errors = exportsOf('errors/index.ts').map((symbol) => symbol.name).filter((name) => !ERROR_HELPERS.includes(name));
  assert.deepEqual(errors.filter((name) => !exported.has(name)), [], 'an error of errors/ the library does not export');
  assert.deepEqual(INTERNALS.filter((name) => exported.has(name)), []);
});
