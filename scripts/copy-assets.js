#!/usr/bin/env node
// Copies the files under src/ that tsc does not compile (the HTML timeline's timeline.css and
// timeline.js) to the same place under dist/, so the built CLI finds them beside its modules.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const ASSET = /\.(css|js)$/;

const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]));
for (const file of walk(src).filter((f) => ASSET.test(f))) {
  const target = join(dist, relative(src, file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}
