// `@path` mentions: a word starting with "@" that names an existing file brings the file's text after
// the message (once per file, in the order first mentioned, cut at 50 KB at a whole character);
// anything else stays plain text; a file no tool may read refuses the whole message (EMENTION).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MentionRefusedError } from '../../src/errors/index.js';
import { expandMentions } from '../../src/session/mentions.js';
import { MODEL_OUTPUT_MAX_BYTES } from '../../src/tools/truncate.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function tree(files: Record<string, string | Buffer>): string {
  const root = scratch.dir('savepoint-mentions-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const refused = (pattern: RegExp) => (error: unknown) => error instanceof MentionRefusedError && error.code === 'EMENTION' && pattern.test(error.message) && /Nothing was sent/.test(error.message);

test("each mentioned file's text follows the message once, in the order first mentioned, a sentence's last mark left off", () => {
  const root = tree({ 'src/add.js': 'export const add = 1;\n', 'b.txt': 'no newline' });
  const text = 'look at @b.txt, then @src/add.js. And @b.txt again';
  assert.equal(expandMentions(text, { root, cwd: root }), `${text}\n\n<file path="b.txt">\nno newline\n</file>\n\n<file path="src/add.js">\nexport const add = 1;\n</file>`);
});

test('mentions resolve from the current directory and name the file by its repository path', () => {
  const root = tree({ 'pkg/a.md': 'A\n' });
  assert.match(expandMentions('see @a.md', { root, cwd: join(root, 'pkg') }), /<file path="pkg\/a\.md">\nA\n<\/file>$/);
});

test('an email address, a path to nothing, a directory and a word inside another stay plain text', () => {
  const root = tree({ 'src/x.ts': 'x' });
  for (const text of ['mail me@example.com', 'install @types/node', 'the folder @src', 'a@src/x.ts']) assert.equal(expandMentions(text, { root, cwd: root }), text);
});

test('a file past 50 KB is cut at a whole character with how to read the rest', () => {
  const big = 'é'.repeat(MODEL_OUTPUT_MAX_BYTES); // two bytes each: the cut falls on a character's edge or inside one
  const root = tree({ 'big.txt': `x${big}` });
  const out = expandMentions('@big.txt', { root, cwd: root });
  const body = /<file path="big.txt">\n([\s\S]*)\n<\/file>/.exec(out)![1]!;
  assert.ok(!body.includes('\uFFFD'), 'no broken character');
  assert.ok(Buffer.byteLength(body) <= MODEL_OUTPUT_MAX_BYTES);
  assert.match(out, new RegExp(`\\[cut at ${MODEL_OUTPUT_MAX_BYTES} of its ${1 + 2 * MODEL_OUTPUT_MAX_BYTES} bytes: read_file big.txt with an offset reads the rest\\]$`));
});

test('a file outside the repository (through a link), a binary one, or one a read rule denies refuses the message', () => {
  const outside = tree({ 'secret.txt': 'no' });
  const root = tree({ 'bin.dat': Buffer.from([1, 0, 2]), 'env.txt': 'KEY=1' });
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
  assert.throws(() => expandMentions('@link.txt', { root, cwd: root }), refused(/@link\.txt cannot be put in the message: the path .* resolves outside the repository/));
  assert.throws(() => expandMentions('@bin.dat', { root, cwd: root }), refused(/bin\.dat is a binary file \(3 bytes\)/));
  const permission = (tool: string, input: Record<string, unknown>) => (tool === 'read_file' && input.path === 'env.txt' ? { verdict: 'deny' as const, rule: 'Read(env.txt)' } : undefined);
  assert.throws(() => expandMentions('@env.txt', { root, cwd: root, permission }), refused(/reading env\.txt is denied by the rule "Read\(env\.txt\)"/));
  const withGit = tree({ '.git/config': '[core]' });
  assert.throws(() => expandMentions('@.git/config', { root: withGit, cwd: withGit }), refused(/\.git/));
});
