#!/usr/bin/env node
// The `savepoint` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('savepoint: the build is missing (dist/). Run "npm install" or "npm run build" in the savepoint folder first.\n');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
