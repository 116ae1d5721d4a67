#!/usr/bin/env node
// The `savepoint` command. It runs dist/cli.js, the command line as scripts/bundle.js bundled it: in
// a clone `npm install` builds it (prepare), in the package it was built before packing (prepack).
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of the bundle between runs (in the system's temp
// folder, keyed by Node's version and each file's content): start-up compiles ~1.5 MB of JavaScript
// otherwise, 60-90 ms of a 300-450 ms start (docs/benchmarks.md). NODE_COMPILE_CACHE chooses the
// folder, NODE_DISABLE_COMPILE_CACHE=1 turns it off, as for any Node program. Older Node has no
// such call; a cache that cannot be written (a read-only temp folder) only costs the saving.
try {
  module.enableCompileCache?.();
} catch {
  // no cache: start-up compiles as before
}

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('savepoint: the build is missing (dist/). Run "npm install" or "npm run build" in the savepoint folder first.\n');
  process.exit(1);
}
// In a clone, a stack trace (SAVEPOINT_DEBUG=1) names the lines of src/*.ts through the bundle's
// source maps; the package ships none (it ships no src/), so there it names dist/ lines.
if (process.env.SAVEPOINT_DEBUG === '1') process.setSourceMapsEnabled(true);
let main;
try {
  ({ main } = await import(entry.href));
} catch (error) {
  // Loading the command line opens its files; with `ulimit -n` set very low there is no descriptor
  // left for them. Said as what to do, as the command line itself says it once it is loaded.
  if (!['EMFILE', 'ENFILE'].includes(error?.code) || process.env.SAVEPOINT_DEBUG === '1') throw error;
  process.stderr.write(
    `savepoint ran out of open files while starting (${error.code}): raise the limit of open files, for example with "ulimit -n 1024" in this shell, then run the same command again.\n`,
  );
  process.exit(1);
}
await main(process.argv);
