#!/usr/bin/env node
// Bundles the command line (dist/cli/main.js, as tsc compiled it, with its dependencies) into
// dist/bundle/ with esbuild, for start-up: loading one file is much cheaper than resolving, reading
// and linking the ~400 modules that `savepoint run` needs before its first model call (most of them
// @anthropic-ai/sdk's). Code splitting keeps every lazy import() lazy: each command, the SDK,
// isomorphic-git, execa and diff stay chunks of their own, loaded only when used. bin/savepoint.js
// runs the bundle; dist/ itself stays tsc's output, the library (package.json main and types).
//
// A module that finds a file next to itself (`new URL('./timeline.css', import.meta.url)`) finds it
// where tsc put it: each `import.meta.url` becomes the address of the module's own file under dist/.
// The source maps chain through tsc's, so with SAVEPOINT_DEBUG=1 stack traces name src/*.ts lines.
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const outdir = join(dist, 'bundle');

// import.meta.url in a module of dist/ → that module's own address, computed from the chunk's.
const ownModuleUrl = {
  name: 'own-module-url',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist + sep)) return undefined;
      const code = await readFile(args.path, 'utf8');
      if (!code.includes('import.meta.url')) return undefined;
      const own = relative(outdir, args.path).split(sep).join('/');
      return { contents: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: join(dist, 'cli', 'main.js') },
  outdir,
  bundle: true,
  splitting: true,
  keepNames: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: 'chunk-[hash]',
  // The CommonJS dependencies (commander) call require() for Node's own modules.
  banner: { js: "import { createRequire as __savepointRequire } from 'node:module'; const require = __savepointRequire(import.meta.url);" },
  plugins: [ownModuleUrl],
  logLevel: 'warning',
});
