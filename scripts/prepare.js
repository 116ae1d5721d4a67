#!/usr/bin/env node
// `prepare`: npm runs it on `npm install` in a clone (and on `npm link`, and when installing from a
// git URL). It builds dist/ when dist/ is missing or older than a file of src/ or a build script,
// and otherwise does nothing, so that a second `npm install` or `npm link` costs no build. The
// package itself is built at `prepack` and ships no src/: installed from it, this does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
if (!existsSync(src)) process.exit(0);

const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]));
// The bundle's entry, then the declarations: the build writes them in this order.
const outputs = ['cli.cjs', 'index.js', 'index.d.ts'].map((name) => join(root, 'dist', name));
const inputs = [...walk(src), ...walk(join(root, 'scripts')), join(root, 'package.json'), join(root, 'tsconfig.json')];
const fresh = outputs.every(existsSync) && inputs.every((file) => statSync(file).mtimeMs <= statSync(outputs[0]).mtimeMs);
if (!fresh) {
  const npm = process.env.npm_execpath;
  const build = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(build.status ?? 1);
}
