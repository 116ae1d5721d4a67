#!/usr/bin/env node
// The `savepoint` command. It runs dist/cli.js, the command line as scripts/bundle.js bundled it: in
// a clone `npm install` builds it (prepare), in the package it was built before packing (prepack).
import { existsSync } from 'node:fs';

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
