#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner (through tsx), because Node 20's
// `--test` does not expand globs itself. Extra arguments are passed on, so
// `npm test -- --test-name-pattern=divergence` works. A file list may follow `--`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const collect = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' || name === 'fixtures' ? [] : collect(path);
    return name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });

const args = process.argv.slice(2);
const files = args.filter((a) => a.endsWith('.ts'));
const flags = args.filter((a) => !a.endsWith('.ts'));
const targets = files.length ? files : collect(join(root, 'test')).sort();
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...flags, ...targets],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
