// git's path rules as pure code, one rule at a time: what read-cache.c's verify_path refuses
// (`.git` in every spelling NTFS and HFS+ fold to it, `.` and `..`, empty and absolute names,
// backslash tricks, a symlinked .gitmodules), the modes fsck accepts, and paths beneath a
// symbolic link. Where git is at hand, its own `git update-index` is asked too, as the judge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { beneathNonDirectory, componentViolation, modeViolation, nameViolation, parseRawTree, pathViolation } from '../../src/git/path-rules.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const rule = (name: string, mode = '100644') => componentViolation(name, mode)?.rule;

describe('git path rules', { concurrency: true }, () => {
  test('.git is refused in any case, with trailing dots and spaces, as an NTFS stream or short name', () => {
    for (const name of ['.git', '.GIT', '.Git', '.git.', '.git ', '.GIT .', '.git. . .', '.git::$INDEX_ALLOCATION', '.git:foo', 'git~1', 'GIT~1', 'git~1 .']) {
      assert.equal(rule(name), 'dotgit', name);
    }
  });

  test('HFS+ ignorable code points do not hide .git', () => {
    for (const name of ['.g\u200cit', '\u200d.git', '.gi\ufefft', '.G\u206aIT\u200f']) assert.equal(rule(name), 'dotgit', JSON.stringify(name));
  });

  test('names that only resemble .git are allowed', () => {
    for (const name of ['.gitignore', '.github', '.gitattributes', 'git', '.gitx', 'x.git', '.git~1', 'git~2', '.g']) assert.equal(rule(name), undefined, name);
  });

  test('. and .. are refused, as components and between backslashes', () => {
    assert.equal(rule('.'), 'dot');
    assert.equal(rule('..'), 'dot');
    assert.equal(rule('..\\etc'), 'backslash');
    assert.equal(rule('a\\..\\b'), 'backslash');
    assert.equal(rule('a\\.git\\hooks'), 'dotgit');
    assert.equal(rule('...'), undefined, '"..." is an ordinary name on Linux');
    assert.equal(rule('a\\b'), undefined);
  });

  test('.gitmodules may not be a symbolic link, in any spelling; as a file it is fine', () => {
    for (const name of ['.gitmodules', '.GITMODULES', '.gitmodules .', 'gitmod~1', 'GI7EBA~1', '.gitm\u200codules']) assert.equal(rule(name, '120000'), 'gitmodules-link', name);
    assert.equal(rule('.gitmodules', '100644'), undefined);
  });

  test('tree entry names: empty, a slash inside; a name that is not UTF-8 is allowed, as git allows it', () => {
    assert.equal(nameViolation(Buffer.from(''), '100644')?.rule, 'empty');
    assert.equal(nameViolation(Buffer.from('a/b'), '100644')?.rule, 'slash');
    assert.equal(nameViolation(Buffer.from([0x66, 0xff, 0x6f]), '100644'), undefined);
    assert.equal(nameViolation(Buffer.from([0x2e, 0x67, 0x69, 0x74]), '40000')?.rule, 'dotgit', 'still .git');
    assert.equal(nameViolation(Buffer.from('caf\u00e9.txt'), '100644'), undefined);
  });

  test('paths: absolute, empty components, a bad component anywhere', () => {
    assert.equal(pathViolation('/etc/passwd', '100644')?.rule, 'absolute');
    assert.equal(pathViolation('a//b', '100644')?.rule, 'empty');
    assert.equal(pathViolation('a/', '100644')?.rule, 'empty');
    assert.equal(pathViolation('src/../../x', '100644')?.rule, 'dot');
    assert.equal(pathViolation('sub/.GIT/config', '100644')?.rule, 'dotgit');
    assert.equal(pathViolation('src/a.js', '100644'), undefined);
    assert.equal(pathViolation('src/a.js', '100664')?.rule, 'mode');
  });

  test('only the modes git writes', () => {
    for (const mode of ['100644', '100755', '120000', '40000', '160000']) assert.equal(modeViolation(mode), undefined, mode);
    for (const mode of ['100664', '040000', '100600', '644', '', '170000', '100644 ']) assert.equal(modeViolation(mode)?.rule, 'mode', mode);
  });

  test('a path beneath a symbolic link, a file or a submodule of the same checkpoint', () => {
    assert.match(beneathNonDirectory(new Map([['a', '120000'], ['a/x', '100644']]))?.violation.reason ?? '', /beneath a, which the same checkpoint makes a symbolic link/);
    assert.equal(beneathNonDirectory(new Map([['a/b', '100644'], ['a/b/c/d', '100644']]))?.path, 'a/b/c/d');
    assert.match(beneathNonDirectory(new Map([['sub', '160000'], ['sub/x', '100644']]))?.violation.reason ?? '', /a submodule/);
    assert.equal(beneathNonDirectory(new Map([['a/x', '100644'], ['ab', '120000'], ['a/y', '100644']])), undefined);
  });

  test('raw tree entries keep duplicates and bytes, and a torn tree is an error', () => {
    const oid = Buffer.alloc(20, 0xab);
    const body = Buffer.concat([Buffer.from('120000 a\0'), oid, Buffer.from('40000 a\0'), oid]);
    const entries = parseRawTree(body);
    assert.deepEqual(entries.map((e) => [e.mode, e.name.toString(), e.oid]), [
      ['120000', 'a', 'ab'.repeat(20)],
      ['40000', 'a', 'ab'.repeat(20)],
    ]);
    assert.throws(() => parseRawTree(body.subarray(0, body.length - 3)), /truncated/);
  });

  test('agrees with git update-index on every name above', async () => {
    const repo = await scratch.repo();
    const blob = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo.root, input: 'x', encoding: 'utf8' }).stdout.trim();
    const names = ['.git', '.GIT', '.git.', '.git ', 'git~1', '.g\u200cit', '..', 'a/../b', 'a/.git/x', '.gitignore', '.github', 'x.git', 'ok/fine.txt', 'a\\.git'];
    for (const name of names) {
      const git = spawnSync('git', ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', 'update-index', '--add', '--cacheinfo', `100644,${blob},${name}`], { cwd: repo.root, encoding: 'utf8' });
      const ours = pathViolation(name, '100644');
      assert.equal(ours !== undefined, git.status !== 0, `${JSON.stringify(name)}: git ${git.status === 0 ? 'accepts' : 'refuses'} it, we ${ours ? `refuse it (${ours.rule})` : 'accept it'}`);
    }
  });
});
