// Reading project instructions: AGENTS.md (else CLAUDE.md) from the user's config folder, the
// repository root and each folder from the root down to the current directory, the more general
// first, each under its own heading when there are several; secrets redacted; nothing from outside
// the root or inside .git.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readInstructions } from '../../src/session/instructions.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function tree(files: Record<string, string>): string {
  const dir = scratch.dir('savepoint-instructions-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('the user file, the root and each folder down to the current one, in that order, each with its heading', () => {
  const root = tree({ 'AGENTS.md': 'root rules\n', 'pkg/CLAUDE.md': 'pkg rules\n', 'pkg/app/AGENTS.md': 'app rules\n', 'pkg/app/CLAUDE.md': 'not this one\n', 'other/AGENTS.md': 'not on the way\n' });
  const config = tree({ 'savepoint/AGENTS.md': 'my own rules\n' });
  const read = readInstructions(root, (t) => t, { cwd: join(root, 'pkg', 'app', 'src'), env: { XDG_CONFIG_HOME: config } });
  assert.ok(read);
  assert.equal(read.file, `${join(config, 'savepoint', 'AGENTS.md')}, AGENTS.md, pkg/CLAUDE.md, pkg/app/AGENTS.md`);
  const order = ['my own rules', 'root rules', 'pkg rules', 'app rules'].map((t) => read.text.indexOf(t));
  assert.deepEqual([...order].sort((a, b) => a - b), order, 'the more general first');
  assert.ok(!order.includes(-1), read.text);
  assert.match(read.text, /^## pkg\/app\/AGENTS\.md$/m);
  assert.doesNotMatch(read.text, /not this one|not on the way/);
});

test('one file reads as before (no heading), a current directory outside the root adds nothing, and secrets are redacted', () => {
  const root = tree({ 'AGENTS.md': 'token sk-live-123\n' });
  const read = readInstructions(root, (t) => t.replace('sk-live-123', '[REDACTED]'), { cwd: '/', env: { XDG_CONFIG_HOME: scratch.dir() } });
  assert.deepEqual(read, { file: 'AGENTS.md', text: 'token [REDACTED]\n' });
  assert.equal(readInstructions(tree({ 'README.md': 'x' }), (t) => t, { env: { XDG_CONFIG_HOME: scratch.dir() } }), undefined);
});
