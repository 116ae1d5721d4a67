// scripts/test-summary.js, the reporter `npm test` ends with: a failing test is named with its
// error; a `todo` test that fails is work still to do (Node's runner exits 0 for it), counted apart.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPORTER = fileURLToPath(new URL('../../scripts/test-summary.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'savepoint-summary-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// The runner marks its own file processes with NODE_TEST_CONTEXT; a child run carrying it would not run its file.
const env = { ...process.env, NODE_TEST_CONTEXT: undefined };

test('a failing todo test is counted as todo, a failing test as failing', () => {
  const file = join(dir, 'mixed.test.mjs');
  writeFileSync(
    file,
    [
      "import test from 'node:test';",
      "test('a todo that fails', { todo: 'later' }, () => { throw new Error('not yet'); });",
      "test('a passing test', () => {});",
      "test('a real failure', () => { throw new Error('boom at the real failure'); });",
    ].join('\n'),
  );
  const result = spawnSync(process.execPath, ['--test', `--test-reporter=${REPORTER}`, file], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stdout, /# 1 failing:\n {2}mixed\.test\.mjs: a real failure\n {4}boom at the real failure/);
  assert.doesNotMatch(result.stdout, /a todo that fails/);
  assert.match(result.stdout, /# 1 todo test not passing yet \(not failures\)/);
});

test('a run whose only failure is a todo says no test failed', () => {
  const file = join(dir, 'todo.test.mjs');
  writeFileSync(file, ["import test from 'node:test';", "test('a todo that fails', { todo: true }, () => { throw new Error('not yet'); });", "test('a passing test', () => {});"].join('\n'));
  const result = spawnSync(process.execPath, ['--test', `--test-reporter=${REPORTER}`, file], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /# no test failed\n# 1 todo test not passing yet/);
});
