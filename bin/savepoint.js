#!/usr/bin/env node
// The `savepoint` command. `npm install` (prepare) compiles the TypeScript sources to dist/ and
// bundles the command line into dist/bundle/ (scripts/bundle.js): one file to load, for start-up.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bundle/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('savepoint: the build is missing (dist/). Run "npm install" or "npm run build" in the savepoint folder first.\n');
  process.exit(1);
}
// A stack trace (SAVEPOINT_DEBUG=1) names the lines of src/*.ts, through the bundle's source maps.
if (process.env.SAVEPOINT_DEBUG === '1') process.setSourceMapsEnabled(true);
const { main } = await import(entry.href);
await main(process.argv);
