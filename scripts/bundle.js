#!/usr/bin/env node
// Builds the JavaScript of dist/ with esbuild, bundled from src/ together with their dependencies'
// code: the command line (dist/cli.cjs, which bin/savepoint.js runs) and the library
// (dist/index.js, package.json "exports"). tsc then adds only the declarations (tsconfig.json:
// emitDeclarationOnly), so dist/ is one build output.
//
// Why a bundle: loading a few files is much cheaper than resolving, reading and linking the
// hundreds of modules of src/ and of the dependencies one by one (the Anthropic SDK alone is ~300). Measured with 20 alternated runs each on an idle-ish 2-core machine,
// the bundle against tsc's per-file output: `savepoint --help` 171 vs 259 ms (median),
// `savepoint runs` 163 vs 195 ms (docs/benchmarks.md, "Start-up").
//
// Why the command line is one CommonJS file: bin/savepoint.js keeps V8's compiled code of it
// between runs (Node 20 has no compile cache of its own for ES modules; docs/architecture.md,
// "Start-up"), and V8 keeps the code of one script. With its compiled code kept, all of it costs less
// to load than the ES chunks of one command compiled afresh: a resume of a 6,000-step run went from
// a 526 to a 372 ms median, spawn to its first request. Its lazy import()s stay lazy: a module
// loaded on demand is evaluated on demand. The library stays ES modules with code splitting, each
// of its lazy import()s a chunk of its own.
//
// A module that finds a file next to itself (`new URL('./timeline.css', import.meta.url)`) finds it
// where it would be in a per-file build: each `import.meta.url` in src/ becomes the address of that
// module's own place under dist/ (dist/report/timeline-assets.js for src/report/timeline-assets.ts),
// and scripts/copy-assets.js puts the assets there.
//
// `--no-source-maps` (the package, `prepack`): the maps name src/*.ts, which the package does not
// ship. A clone's build keeps them, so that SAVEPOINT_DEBUG=1 stack traces name the TypeScript lines.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const sourceMaps = !process.argv.includes('--no-source-maps');

// import.meta.url in a module of src/ → the address its compiled file would have under dist/, from
// the address of the bundle it is in: `base` is that address, as an expression of the bundle's format.
const ownModuleUrl = (base) => ({
  name: 'own-module-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(src + sep)) return undefined;
      const code = await readFile(args.path, 'utf8');
      if (!code.includes('import.meta.url')) return undefined;
      const own = relative(src, args.path).split(sep).join('/').replace(/\.ts$/, '.js');
      return {
        contents: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, ${base}).href`),
        loader: 'ts',
        resolveDir: dirname(args.path),
      };
    });
  },
});

// Loaded only on demand (a proxy configured, an HTML page fetched, an MCP server started), so bundling them would buy
// no start-up: they stay the installed dependencies they are, and keep the package small.
const external = ['undici', 'turndown', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'];
const common = {
  outdir: dist,
  bundle: true,
  keepNames: true,
  platform: 'node',
  target: 'node20',
  sourcemap: sourceMaps ? 'linked' : false,
  external,
  logLevel: 'warning',
};

// Every build starts from nothing, so that no file of an older build (tsc's per-file JavaScript, a
// chunk of a module since removed) is left in dist/ to be packed.
await rm(dist, { recursive: true, force: true });
await Promise.all([
  // The command line: one CommonJS script, its own code and its dependencies' (see above).
  build({
    ...common,
    entryPoints: { cli: join(src, 'cli', 'main.ts') },
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    // import() of a dependency left out of the bundle becomes require(): node:vm does not run import() in a script whose compiled code it was given (Node 20).
    supported: { 'dynamic-import': false },
    plugins: [ownModuleUrl("require('node:url').pathToFileURL(__filename)")],
  }),
  // The library: ES modules, split so that each lazy import() is a chunk of its own.
  build({
    ...common,
    entryPoints: { index: join(src, 'index.ts') },
    splitting: true,
    format: 'esm',
    // Chunks beside the entry, in dist/ itself: the addresses ownModuleUrl computes are relative to it.
    chunkNames: 'chunk-[hash]',
    // The CommonJS dependencies (commander) call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __savepointRequire } from 'node:module'; const require = __savepointRequire(import.meta.url);",
    },
    plugins: [ownModuleUrl('import.meta.url')],
  }),
]);

// The command line in ASCII alone: Node decodes ASCII on its fast path (7 ms for the 2.6 MB,
// against 43 ms with a few hundred other characters in it, measured at load). esbuild writes
// strings, templates and identifiers in ASCII already (its default charset); it leaves other
// characters in comments, escaped here (a comment reads the same), and in regular expressions,
// which src/ writes with escapes. Anything else left is said, not changed: an escape there could
// change what the code means (a tagged template's raw text).
const cli = join(dist, 'cli.cjs');
// A line of a comment: `//`, `/*`, or a JSDoc line's `*` (not a generator method's `*name(`).
const commentLine = /^\s*(\/\/|\/\*|\*(\s|\/|$))/;
const lines = (await readFile(cli, 'utf8')).split('\n');
const escaped = lines.map((line) =>
  commentLine.test(line) ? line.replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`) : line,
);
await writeFile(cli, escaped.join('\n'));
const left = escaped.flatMap((line, index) => (/[^\x00-\x7f]/.test(line) ? [`  line ${index + 1}: ${line.trim().slice(0, 120)}`] : []));
if (left.length > 0)
  console.warn(
    `dist/cli.cjs is not ASCII, so Node decodes it on its slow path at every start; write these characters as escapes in src/:\n${left.join('\n')}`,
  );
