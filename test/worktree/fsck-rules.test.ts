// What `git fsck --strict` would reject in a checkpoint's tree, told from the file before it is
// recorded: .gitmodules and .gitattributes read as git reads them, the other files git reads from a
// tree refused as symbolic links, and every other file let through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fsckRefusal } from '../../src/worktree/fsck-rules.js';

const file = (text: string) => ({ content: Buffer.from(text) });

test('a file git does not read from a tree is never refused, as a link or as content', () => {
  assert.equal(fsckRefusal('src/app.ts', { symlink: true }), undefined);
  assert.equal(fsckRefusal('README.md', file('[submodule "x"]\n\turl = -oProxyCommand=evil\n')), undefined);
});

test('a .gitmodules as a symbolic link, under any spelling git treats as it, is refused', () => {
  assert.match(fsckRefusal('.gitmodules', { symlink: true })!, /^a symbolic link named \.gitmodules, which git fsck rejects/);
  assert.match(fsckRefusal('sub/.GITMODULES', { symlink: true })!, /spelled "\.GITMODULES"/);
});

test('a .gitmodules whose url or path reads as an option, or whose update runs a command, is refused', () => {
  assert.match(fsckRefusal('.gitmodules', file('[submodule "x"]\n\tpath = x\n\turl = -u./payload\n'))!, /url reads as an option/);
  assert.match(fsckRefusal('.gitmodules', file('[submodule "x"]\n\turl = https://example.com/a%0a.git\n'))!, /url reads as an option or is one git disallows/);
  assert.match(fsckRefusal('.gitmodules', file('[submodule "x"]\n\tpath = -x\n'))!, /path reads as an option/);
  assert.match(fsckRefusal('.gitmodules', file('[submodule "x"]\n\tupdate = !rm -rf /\n'))!, /update runs a command/);
  assert.match(fsckRefusal('.gitmodules', file('[submodule "../x"]\n\turl = https://example.com/x.git\n'))!, /name holding "\.\."/);
  assert.match(fsckRefusal('.gitmodules', file('[submodule "x"\n'))!, /config parser cannot read/);
  assert.equal(fsckRefusal('.gitmodules', file('[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n')), undefined);
});

test('a .gitattributes is refused only with a line of 2,048 bytes or more before its first NUL', () => {
  assert.equal(fsckRefusal('.gitattributes', file(`*.png binary\n${'a'.repeat(2047)}\n`)), undefined);
  assert.match(fsckRefusal('.gitattributes', file(`*.png binary\n${'a'.repeat(2048)}\n`))!, /line of 2048 bytes or more/);
  assert.equal(fsckRefusal('.gitattributes', Object.assign(file(''), { content: Buffer.concat([Buffer.from('ok\n\0'), Buffer.alloc(3000, 97)]) })), undefined);
});
