#!/usr/bin/env node
// Builds the JavaScript of dist/ with esbuild: the command line (dist/cli.js, which bin/savepoint.js
// runs) and the library (dist/index.js, package.json "exports"), bundled from src/ together with
// their dependencies' code, in one build so that the two share their chunks. tsc then adds only the
// declarations (tsconfig.json: emitDeclarationOnly), so dist/ is one build output.
//
// Why a bundle: loading a few files is much cheaper than resolving, reading and linking the
// hundreds of modules of src/ and of the dependencies one by one (the Anthropic SDK alone is ~300). Measured with 20 alternated runs each on an idle-ish 2-core machine,
// the bundle against tsc's per-file output: `savepoint --help` 171 vs 259 ms (median),
// `savepoint runs` 163 vs 195 ms (docs/benchmarks.md, "Start-up"). Code splitting keeps every lazy
// import() lazy: each command's modules stay chunks of their own, loaded only when used, and the
// CLI and the library share their chunks.
//
// A module that finds a file next to itself (`new URL('./timeline.css', import.meta.url)`) finds it
// where it would be in a per-file build: each `import.meta.url` in src/ becomes the address of that
// module's own place under dist/ (dist/report/timeline-assets.js for src/report/timeline-assets.ts),
// and scripts/copy-assets.js puts the assets there.
//
// `--no-source-maps` (the package, `prepack`): the maps name src/*.ts, which the package does not
// ship. A clone's build keeps them, so that SAVEPOINT_DEBUG=1 stack traces name the TypeScript lines.
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const sourceMaps = !process.argv.includes('--no-source-maps');

// import.meta.url in a module of src/ → the address its compiled file would have under dist/.
const ownModuleUrl = {
  name: 'own-module-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(src + sep)) return undefined;
      const code = await readFile(args.path, 'utf8');
      if (!code.includes('import.meta.url')) return undefined;
      const own = relative(src, args.path).split(sep).join('/').replace(/\.ts$/, '.js');
      return { contents: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: 'ts', resolveDir: dirname(args.path) };
    });
  },
};

// Every build starts from nothing, so that no file of an older build (tsc's per-file JavaScript, a
// chunk of a module since removed) is left in dist/ to be packed.
await rm(dist, { recursive: true, force: true });
await build({
  entryPoints: { cli: join(src, 'cli', 'main.ts'), index: join(src, 'index.ts') },
  outdir: dist,
  bundle: true,
  splitting: true,
  keepNames: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: sourceMaps ? 'linked' : false,
  // Chunks beside the entries, in dist/ itself: the addresses ownModuleUrl computes are relative to it.
  chunkNames: 'chunk-[hash]',
  // The CommonJS dependencies (commander) call require() for Node's own modules.
  banner: { js: "import { createRequire as __savepointRequire } from 'node:module'; const require = __savepointRequire(import.meta.url);" },
  plugins: [ownModuleUrl],
  // Loaded only on demand (a proxy configured, an HTML page fetched, an MCP server started), so bundling them would buy
  // no start-up: they stay the installed dependencies they are, and keep the package under 1 MB.
  external: ['undici', 'turndown', '@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
  logLevel: 'warning',
});
