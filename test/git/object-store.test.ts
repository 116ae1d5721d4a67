// The loose-object store's writes, judged by the git CLI: every byte is written even when the
// system writes fewer than asked, and an object file found already in place is kept only once its
// content checks out (a torn or wrong file, as a writer that does not fsync leaves at a power cut,
// is replaced); nothing is left in objects/ but objects.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, { readdirSync, statSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { makeObject } from '../../src/git/git-object.js';
import { ObjectStore } from '../../src/git/object-store.js';
import { assertFsckClean, gitOut, journalFile } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// Object files git does not know (anything but a 38-hex-digit name in a fan-out directory).
function strayFiles(gitdir: string): string[] {
  const objects = join(gitdir, 'objects');
  const stray: string[] = [];
  for (const name of readdirSync(objects)) {
    if (name === 'pack' || name === 'info') continue;
    if (!/^[0-9a-f]{2}$/.test(name)) stray.push(name);
    else for (const file of readdirSync(join(objects, name))) if (!/^[0-9a-f]{38}$/.test(file)) stray.push(`${name}/${file}`);
  }
  return stray;
}

describe('writing objects', () => {
  it('writes every byte when each write writes only a few of them', async () => {
    const repo = await scratch.repo();
    const real = fs.writeSync;
    let calls = 0;
    // At most 7 bytes a call, as a full disk or a signal can make write(2) do.
    const shortWrite = (fd: number, buffer: Uint8Array, offset = 0, length = buffer.length - offset, position?: number | null) => {
      calls++;
      return real(fd, buffer, offset, Math.min(length, 7), position);
    };
    fs.writeSync = shortWrite as typeof fs.writeSync; // the library writes buffers only
    syncBuiltinESMExports();
    try {
      const store = await JournalStore.open(repo.root);
      const content = `${'a long line that takes many short writes\n'.repeat(50)}`;
      await store.append([{ path: 'runs/short/steps/000/000001-x.json', content }], 'short writes');
      assert.equal(`${await journalFile(repo.root, 'runs/short/steps/000/000001-x.json')}\n`, content);
    } finally {
      fs.writeSync = real;
      syncBuiltinESMExports();
    }
    assert.ok(calls > 20, `the writes were short (${calls} calls)`);
    await assertFsckClean(repo.root);
  });

  const torn: Record<string, (object: { oid: string; body: Buffer }) => Buffer> = {
    'empty': () => Buffer.alloc(0),
    'zero-filled': () => Buffer.alloc(64),
    'truncated': (object) => deflateSync(Buffer.concat([Buffer.from(`blob ${object.body.length}\0`), object.body])).subarray(0, 12),
    'another object under its name': () => deflateSync(Buffer.from('blob 6\0wrong\n')),
    'the right header but too short': (object) => deflateSync(Buffer.concat([Buffer.from(`blob ${object.body.length}\0`), object.body.subarray(1)])),
  };
  for (const [kind, bytes] of Object.entries(torn)) {
    it(`replaces an object file found already in place when it is ${kind}`, async () => {
      const repo = await scratch.repo();
      const gitdir = join(repo.root, '.git');
      const content = `the content of a step (${kind})\n`;
      const blob = makeObject('blob', Buffer.from(content));
      const path = join(gitdir, 'objects', blob.oid.slice(0, 2), blob.oid.slice(2));
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, bytes(blob));
      chmodSync(path, 0o444);
      const store = await JournalStore.open(repo.root);
      await store.append([{ path: 'runs/torn/run.json', content }], `torn: ${kind}`);
      assert.equal(await gitOut(repo.root, ['cat-file', '-p', blob.oid]), content.trimEnd());
      await assertFsckClean(repo.root, kind);
      assert.deepEqual(strayFiles(gitdir), []);
    });
  }

  it('keeps a good object file another process wrote, and rewrites none it wrote itself', async () => {
    const repo = await scratch.repo({ 'a.txt': 'shared content\n' });
    const gitdir = join(repo.root, '.git');
    const oid = await gitOut(repo.root, ['rev-parse', 'HEAD:a.txt']); // written by git
    const path = join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
    const before = statSync(path);
    const objects = new ObjectStore(gitdir);
    const blob = makeObject('blob', Buffer.from('shared content\n'));
    assert.equal(blob.oid, oid);
    objects.write([blob]);
    objects.write([blob]);
    const after = statSync(path);
    assert.equal(after.ino, before.ino, 'the file git wrote is kept');
    const own = makeObject('blob', Buffer.from('written here\n'));
    objects.write([own]);
    const ownPath = join(gitdir, 'objects', own.oid.slice(0, 2), own.oid.slice(2));
    const first = statSync(ownPath).ino;
    objects.write([own]);
    assert.equal(statSync(ownPath).ino, first, 'an object this process wrote is not written again');
    await assertFsckClean(repo.root);
  });
});

describe('an object\'s size from its header', () => {
  it('refuses an object over a limit, loose, packed whole and packed as a delta, without reading its body; a missing one is EOBJECTMISSING', async () => {
    const repo = await scratch.repo({ 'README.md': '# p\n' });
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${i} of a file that changes a little\n`).join('');
    writeFileSync(join(repo.root, 'a.txt'), lines);
    await gitOut(repo.root, ['add', '-A']);
    await gitOut(repo.root, ['commit', '-qm', 'a']);
    writeFileSync(join(repo.root, 'a.txt'), `${lines}one more line\n`);
    await gitOut(repo.root, ['commit', '-qam', 'b']);
    await gitOut(repo.root, ['repack', '-adfq', '--depth=50', '--window=50']);
    writeFileSync(join(repo.root, 'a.txt'), `${lines}a loose one\n`);
    await gitOut(repo.root, ['commit', '-qam', 'c']);
    const listed = (await gitOut(repo.root, ['cat-file', '--batch-all-objects', '--batch-check'])).split('\n');
    const deltas = (await gitOut(repo.root, ['verify-pack', '-v', ...readdirSync(join(join(repo.root, '.git'), 'objects', 'pack')).filter((n) => n.endsWith('.idx')).map((n) => join(join(repo.root, '.git'), 'objects', 'pack', n))])).split('\n').filter((l) => /^[0-9a-f]{40} blob .* [0-9a-f]{40}$/.test(l));
    assert.ok(deltas.length > 0, 'the pack holds a delta');
    const store = new ObjectStore(join(repo.root, '.git'));
    await assert.rejects(store.read('0'.repeat(40), 'blob'), (error: Error & { code?: string }) => error.code === 'EOBJECTMISSING' && error.message.includes('0'.repeat(40)));
    // A limit below an object's size refuses it, packed whole, as a delta or loose; at its size it is read.
    const blobs = listed.map((line) => line.split(' ')).filter(([, type, size]) => type === 'blob' && Number(size) > 0);
    for (const [oid, , size] of blobs) {
      await assert.rejects(store.read(oid!, 'blob', Number(size) - 1), (error: Error & { code?: string }) => error.code === 'EOBJECTTOOBIG' && error.message.includes(`is ${size} bytes`));
      assert.equal((await store.read(oid!, 'blob', Number(size))).length, Number(size));
    }
    assert.ok(blobs.length >= 3);
  });
});

describe('objects deflated with a window sized to them', () => {
  it('are read back by git, loose and packed, at every size around the window boundaries', async () => {
    const repo = await scratch.repo();
    const store = new ObjectStore(join(repo.root, '.git'));
    // Sizes at zlib's smallest window (512 bytes), either side of each power of two, and past the largest (32 KB).
    const sizes = [0, 1, 255, 511, 512, 513, 2047, 2049, 32_767, 32_768, 32_769, 200_000];
    const body = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26) * (i % 3 === 0 ? 1 : 0))).join(''));
    const loose = sizes.map((size) => makeObject('blob', Buffer.concat([Buffer.from('loose '), body(size)])));
    const packed = sizes.map((size) => makeObject('blob', Buffer.concat([Buffer.from('packed '), body(size)])));
    store.write(loose);
    await store.writePacked(packed);
    for (const object of [...loose, ...packed]) {
      const read = spawnSync('git', ['cat-file', 'blob', object.oid], { cwd: repo.root, maxBuffer: 1 << 24 });
      assert.ok(read.status === 0 && read.stdout.equals(object.body), `git reads ${object.oid} (${object.body.length} bytes): ${read.stderr}`);
    }
    await assertFsckClean(repo.root);
  });
});
