// The pack reader: objects are hashed one by one until an eighth of a pack was read, then the pack
// is checked whole once against its SHA-1 trailers and trusted object by object; a damaged pack
// fails that check, and no read, before it or after, hands back wrong bytes.
import assert from 'node:assert/strict';
import fs, { readdirSync, readFileSync, chmodSync, statSync, writeFileSync } from 'node:fs';
import { withBuiltin } from '../helpers/builtins.js';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/journal/store.js';
import { PackReader } from '../../src/git/pack-reader.js';
import { inflateSized } from '../../src/git/pack-format.js';
import { deflateSync } from 'node:zlib';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
const packFiles = (root: string) => readdirSync(join(root, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack')).map((n) => join(root, '.git', 'objects', 'pack', n));
const path = (i: number) => `runs/r/steps/000/${String(i).padStart(6, '0')}-note.json`;
const content = (i: number) => `${JSON.stringify({ step: i, text: `note ${i} `.repeat(40) })}\n`;

describe('the pack reader', () => {
  it("reads a git gc'd journal, and never hands back wrong bytes from a damaged pack", async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    for (let i = 0; i < 40; i++) await store.append([{ path: path(i), content: content(i) }], `note ${i}`);
    await gitOut(repo.root, ['gc', '-q', '--prune=now']);
    const fresh = await JournalStore.open(repo.root);
    for (let i = 0; i < 40; i++) assert.equal((await fresh.fileAt(path(i)))?.toString(), content(i));

    // Damage the pack's middle: the first reads hash each object, the trailer check after them
    // fails, each object is then still hashed, and a read either gives the right bytes or fails.
    const packDir = join(repo.root, '.git', 'objects', 'pack');
    const pack = join(packDir, readdirSync(packDir).find((n) => n.endsWith('.pack'))!);
    const bytes = readFileSync(pack);
    for (let at = Math.floor(bytes.length / 3); at < bytes.length - 40; at += Math.floor(bytes.length / 7)) bytes[at] ^= 0x5a;
    chmodSync(pack, 0o644);
    writeFileSync(pack, bytes);
    const damaged = await JournalStore.open(repo.root).catch(() => undefined);
    let wrong = 0;
    for (let i = 0; i < 40 && damaged; i++) {
      const read = await damaged.fileAt(path(i)).then((b) => b?.toString(), () => 'failed');
      if (read !== 'failed' && read !== undefined && read !== content(i)) wrong++;
    }
    assert.equal(wrong, 0, 'no read handed back bytes that are not the object');
  });

  it("reads objects longer than one read-ahead, and deltas against them, from a git gc'd pack", async () => {
    const repo = await scratch.repo();
    const store = await JournalStore.open(repo.root);
    // Incompressible (random hex), so each zlib stream is far longer than the 4 KB read ahead; the
    // later versions differ by a line each, so `git gc` stores them as deltas of one another.
    const base = randomBytes(60_000).toString('hex');
    const big = (i: number) => `${base.slice(0, 50_000 + i * 1000)}\nversion ${i}\n${base.slice(50_000 + i * 1000)}`;
    for (let i = 0; i < 12; i++) await store.append([{ path: path(i), content: big(i) }], `big ${i}`);
    await gitOut(repo.root, ['gc', '-q', '--prune=now']);
    assert.match(await gitOut(repo.root, ['count-objects', '-v']), /^count: 0$/m, 'every object is in the pack');
    assert.match(await gitOut(repo.root, ['verify-pack', '-v', ...packFiles(repo.root)]), /chain length = 1/, 'some are deltas');
    // The reader itself (the store's one read path): it must not decline any of them.
    const reader = new PackReader(join(repo.root, '.git', 'objects', 'pack'));
    for (let i = 11; i >= 0; i--) {
      const oid = (await gitOut(repo.root, ['rev-parse', `agent-journal:${path(i)}`])).trim();
      assert.equal(reader.read(oid, false)?.body.toString(), big(i), `version ${i}`);
    }
    const fresh = await JournalStore.open(repo.root);
    for (let i = 0; i < 12; i++) assert.equal((await fresh.fileAt(path(i)))?.toString(), big(i), `version ${i} through the store`);
  });

  it('reads a commit and a tree of a big pack without reading all of it, and checks the pack whole once much of it was read', async () => {
    // A clone's pack: HEAD's commit and root tree are all a fresh clone's first checkpoint reads.
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`blob-${i}.bin`, randomBytes(200_000).toString('base64')]));
    const repo = await scratch.repo(files);
    await gitOut(repo.root, ['gc', '-q', '--prune=now']);
    const [pack] = packFiles(repo.root);
    const size = statSync(pack!).size;
    const read = readBytes(() => {
      const reader = new PackReader(join(repo.root, '.git', 'objects', 'pack'));
      return { reader, commit: reader.read(gitOutSync(repo.root, 'HEAD'), false), tree: reader.read(gitOutSync(repo.root, 'HEAD^{tree}'), false) };
    });
    assert.equal(read.value.commit?.type, 'commit');
    assert.equal(read.value.tree?.type, 'tree');
    assert.ok(read.bytes < size / 8, `read ${read.bytes} of the pack's ${size} bytes`);
    // Reading the blobs goes past an eighth of the pack: it is then checked whole, once.
    const blobs = readBytes(() => {
      for (let i = 0; i < 8; i++) assert.equal(read.value.reader.read(gitOutSync(repo.root, `HEAD:blob-${i}.bin`), false)?.body.toString(), files[`blob-${i}.bin`]);
    });
    assert.ok(blobs.bytes >= size, `the pack was read whole once (${blobs.bytes} bytes read, the pack is ${size})`);
    assert.ok(blobs.bytes < 2.5 * size, `and not more than once (${blobs.bytes} bytes read, the pack is ${size})`);
  });
});

function gitOutSync(root: string, rev: string): string {
  return execFileSync('git', ['rev-parse', rev], { cwd: root, encoding: 'utf8' }).trim();
}

// What `fn` gives, and how many bytes it read through fs.readSync (the pack reader's reads).
function readBytes<T>(fn: () => T): { value: T; bytes: number } {
  let bytes = 0;
  const counting = (original: typeof fs.readSync) =>
    ((...args: Parameters<typeof original>) => {
      const n = original(...args);
      bytes += n;
      return n;
    }) as typeof original;
  const value = withBuiltin(fs, 'readSync', counting, fn);
  return { value, bytes };
}

// The reads inflate each object through one reused zlib state; damage is still the error inflateSync
// gives, and a state an error closed is replaced, never reused.
describe('inflateSized', () => {
  it('inflates to the size given, reports damage as zlib does, and inflates again after an error', () => {
    const data = Buffer.from('a journal entry, '.repeat(200));
    const stream = deflateSync(data);
    assert.deepEqual(inflateSized(Buffer.concat([stream, Buffer.from('the next entry')]), data.length), data);
    assert.throws(() => inflateSized(stream.subarray(0, stream.length - 3), data.length), /unexpected end of file/);
    assert.deepEqual(inflateSized(stream, data.length), data);
    const damaged = Buffer.from(stream);
    damaged[damaged.length - 1]! ^= 1;
    assert.throws(() => inflateSized(damaged, data.length), /incorrect data check/);
    // A size that does not match is inflateSync's whole answer, for the caller to refuse.
    assert.equal(inflateSized(stream, 10).length, data.length);
    assert.deepEqual(inflateSized(stream, data.length), data);
    assert.equal(inflateSized(deflateSync(Buffer.alloc(0)), 0).length, 0);
  });
});
