// Which build of the library a child process of a test imports, for fixtures that run the library
// in a process of their own (test/valve/fixtures/appender.mjs, test/locks/fixtures/lock-holder.mjs).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The library a child imports: the built dist/index.js (one bundle, scripts/bundle.js) when it is at
 * least as new as every source file (a fast start: no transpiling), else src/index.ts through tsx
 * (always current). `execArgv` goes before the child's script on its node command line.
 */
export function libraryEntry(): { execArgv: string[]; entry: string } {
  const built = join(root, 'dist', 'index.js');
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]));
  const fresh = existsSync(built) && walk(join(root, 'src')).every((file) => statSync(file).mtimeMs <= statSync(built).mtimeMs);
  return fresh ? { execArgv: [], entry: built } : { execArgv: ['--import', 'tsx'], entry: join(root, 'src/index.ts') };
}

/**
 * How a child process runs the TypeScript file `path` (a fixture or helper under test/, or a module
 * of src/): when the tests run from scripts/run-tests.js's compiled tree (SAVEPOINT_TEST_BUILD), its
 * compiled file with source maps on, started as plain node; else the .ts file through tsx. The child
 * starts in a fraction of the time: no transpiling of src/ in every process.
 */
export function tsChild(path: string): { execArgv: string[]; file: string } {
  const build = process.env.SAVEPOINT_TEST_BUILD;
  const compiled = build ? join(build, relative(root, path)).replace(/\.ts$/, '.js') : undefined;
  return compiled && existsSync(compiled) ? { execArgv: ['--enable-source-maps'], file: compiled } : { execArgv: ['--import', 'tsx'], file: path };
}

/**
 * The program a test starts for the fixture script `path` (an .mjs file under test/): when the tests
 * run from scripts/run-tests.js's compiled tree and it bundled that script (the MCP servers, which
 * load the SDK and zod at every start), the loader at the same name there, which runs the one-file
 * bundle with V8's code cache; else the script itself.
 */
export function bundledFixture(path: string): string {
  const build = process.env.SAVEPOINT_TEST_BUILD;
  const bundled = build ? join(build, relative(root, path)) : undefined;
  return bundled && existsSync(bundled) ? bundled : path;
}
