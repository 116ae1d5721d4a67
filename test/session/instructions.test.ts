// Reading project instructions: AGENTS.md (else CLAUDE.md) from the user's config folder, the
// repository root and each folder from the root down to the current directory, the more general
// first, each under its own heading when there are several; secrets redacted; nothing from outside
// the root or inside .git, symbolic links followed (a file that resolves outside is left out, and said).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readInstructions, type InstructionsLeftOut } from '../../src/session/instructions.js';
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

test('a file that resolves outside the repository is left out and said, the next name is looked for; a link inside the repository is read', () => {
  const outside = tree({ 'netrc-standin': 'machine deploy.example.com login ci password hunter2-standin\n' });
  const root = tree({ 'CLAUDE.md': 'claude rules\n', 'docs/rules.md': 'web rules\n', 'web/app.js': '1\n' });
  symlinkSync(join(outside, 'netrc-standin'), join(root, 'AGENTS.md'));
  symlinkSync('../docs/rules.md', join(root, 'web', 'AGENTS.md'));
  const leftOut: InstructionsLeftOut[] = [];
  const read = readInstructions(root, (t) => t, { cwd: join(root, 'web'), env: { XDG_CONFIG_HOME: scratch.dir() }, onLeftOut: (file) => leftOut.push(file) });
  assert.ok(read);
  assert.equal(read.file, 'CLAUDE.md, web/AGENTS.md');
  assert.doesNotMatch(read.text, /hunter2/);
  assert.match(read.text, /claude rules[\s\S]*web rules/);
  assert.deepEqual(leftOut, [{ file: 'AGENTS.md', target: realpathSync(join(outside, 'netrc-standin')), within: 'repository' }]);
});

test("a file that resolves into .git is left out; a dangling link is nothing to say", () => {
  const root = tree({ '.git/config': '[core]\n\tsecret = x\n' });
  symlinkSync('.git/config', join(root, 'AGENTS.md'));
  symlinkSync(join(root, 'nowhere', 'at-all.md'), join(root, 'CLAUDE.md'));
  const leftOut: InstructionsLeftOut[] = [];
  assert.equal(readInstructions(root, (t) => t, { env: { XDG_CONFIG_HOME: scratch.dir() }, onLeftOut: (file) => leftOut.push(file) }), undefined);
  assert.deepEqual(leftOut.map((l) => l.file), ['AGENTS.md']);
});

test("the user's file must resolve inside the config folder; a config folder that is itself a link is followed", () => {
  const outside = tree({ 'secret.txt': 'password hunter2-standin\n' });
  const config = tree({});
  mkdirSync(join(config, 'savepoint'));
  symlinkSync(join(outside, 'secret.txt'), join(config, 'savepoint', 'AGENTS.md'));
  const root = tree({ 'AGENTS.md': 'root rules\n' });
  const leftOut: InstructionsLeftOut[] = [];
  const read = readInstructions(root, (t) => t, { env: { XDG_CONFIG_HOME: config }, onLeftOut: (file) => leftOut.push(file) });
  assert.deepEqual(read, { file: 'AGENTS.md', text: 'root rules\n' });
  assert.deepEqual(leftOut, [{ file: join(config, 'savepoint', 'AGENTS.md'), target: realpathSync(join(outside, 'secret.txt')), within: 'config folder' }]);

  // Dotfiles kept elsewhere: the config folder links to them, and its files are inside it.
  const dotfiles = tree({ 'savepoint/AGENTS.md': 'my own rules\n' });
  const linked = tree({});
  symlinkSync(dotfiles, join(linked, 'conf'));
  const mine = readInstructions(tree({}), (t) => t, { env: { XDG_CONFIG_HOME: join(linked, 'conf') } });
  assert.equal(mine?.text, 'my own rules\n');
});
