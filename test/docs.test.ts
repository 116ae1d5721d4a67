// The documentation against the code it describes: the README's valve excerpt is the code's own,
// every relative link in README.md, CHANGELOG.md and docs/ names a file that exists, the README
// stays short, and the outcome statuses it lists are the code's. A rename in src/ or a moved page
// then fails here instead of leaving a dead link.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const pages = ['README.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

test("the README's valve excerpt is step() in src/valve/run-journal.ts, line for line", () => {
  const readme = read('README.md');
  const marker = readme.indexOf('<!-- valve excerpt');
  assert.notEqual(marker, -1, 'the README marks its valve excerpt');
  const excerpt = /```ts\n([\s\S]*?)\n```/.exec(readme.slice(marker))?.[1];
  assert.ok(excerpt, 'a ts block follows the marker');
  const code = read('src/valve/run-journal.ts').split('\n').map((line) => line.replace(/^ {2}/, ''));
  const lines = excerpt.split('\n');
  assert.match(lines[0]!, /^async step<T>\(/, 'the excerpt starts at step()');
  const start = code.indexOf(lines[0]!);
  assert.notEqual(start, -1, 'step() is declared as the excerpt says');
  assert.deepEqual(lines, code.slice(start, start + lines.length), 'the excerpt is the code as it is');
  assert.equal(lines.at(-1), '}', 'the excerpt ends where step() ends');
});

test('every relative link in README.md, CHANGELOG.md and docs/ names a file that exists', () => {
  const dead: string[] = [];
  for (const page of pages) {
    for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
      const path = join(root, dirname(page), target!.split('#')[0]!);
      if (!existsSync(path)) dead.push(`${page} -> ${target} (${relative(root, path)})`);
    }
  }
  assert.deepEqual(dead, []);
});

// Paths that stand for any file, in examples of rules (docs/settings.md), not for a file of savepoint's.
const EXAMPLE_PATHS = new Set(['src/cli/a.ts']);

test('the src/ paths the documentation names exist', () => {
  const missing: string[] = [];
  for (const page of pages) {
    for (const [, path] of read(page).matchAll(/`(src\/[\w./-]+\.ts)`/g)) if (!EXAMPLE_PATHS.has(path!) && !existsSync(join(root, path!))) missing.push(`${page}: ${path}`);
  }
  assert.deepEqual(missing, []);
});

test('the README is at most 300 lines', () => {
  assert.ok(read('README.md').split('\n').length <= 300);
});

test("the outcome statuses the README and docs/library.md list are RunOutcome's, every one", () => {
  const types = read('src/session/types.ts');
  const union = /^\s*status: ([^;]+);/m.exec(types.slice(types.indexOf('interface RunOutcome')))?.[1];
  assert.ok(union, "RunOutcome's status is declared");
  const limits = /limit: ([^;]+);/.exec(read('src/agent/budget.ts'))?.[1] ?? '';
  const statuses = (text: string) => new Set([...text.matchAll(/'([a-z-]+)'/g)].map((match) => match[1]!));
  const expected = statuses(union.replace("LimitReached['limit']", limits));
  assert.ok(expected.has('max-cost') && expected.has('finished'), 'the union was read whole');
  for (const page of ['README.md', 'docs/library.md']) {
    const line = read(page).split('\n').find((text) => text.includes('outcome.status'));
    assert.ok(line, `${page} shows outcome.status`);
    assert.deepEqual(statuses(line.slice(line.indexOf('//'))), expected, page);
  }
});
