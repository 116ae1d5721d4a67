// The one pack writer, on the thread pool (an append's) and on this thread (a checkpoint's batch):
// both put the same two files in place, read-only, the directory noted for the caller's fsync, no
// temp file left; a rename that fails leaves no temp file behind either.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeObject } from '../../src/git/git-object.js';
import { PackBuilder, writePackFiles, writePackFilesSync } from '../../src/git/pack-file.js';
import { DirectorySync } from '../../src/os/durable-file.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

function built() {
  const builder = new PackBuilder();
  builder.add(makeObject('blob', Buffer.from('one\n')));
  builder.add(makeObject('blob', Buffer.from('two\n')));
  return builder.build();
}

// A fresh objects/pack directory, and what its objects/ holds besides pack/ (temp files).
function objectsDir() {
  const objects = join(scratch.dir('pack-file-'), 'objects');
  const pack = join(objects, 'pack');
  mkdirSync(pack, { recursive: true });
  return { pack, leftovers: () => readdirSync(objects).filter((name) => name !== 'pack') };
}

test('both writers put the same pack and index in place, read-only, the directory noted, no temp file left', async () => {
  const pack = built();
  for (const write of [writePackFiles, writePackFilesSync]) {
    const at = objectsDir();
    const dirs = new DirectorySync();
    const noted: string[] = [];
    const add = dirs.add.bind(dirs);
    dirs.add = (dir) => (noted.push(dir), add(dir));
    const path = await write(at.pack, pack, dirs);
    assert.equal(path, join(at.pack, `pack-${pack.id}.pack`), write.name);
    assert.deepEqual(readFileSync(path), pack.pack, write.name);
    assert.deepEqual(readFileSync(join(at.pack, `pack-${pack.id}.idx`)), pack.idx, write.name);
    assert.equal(statSync(path).mode & 0o777, 0o444, write.name);
    assert.ok(noted.includes(at.pack), `${write.name}: the pack directory is noted for the caller's fsync`);
    assert.deepEqual(at.leftovers(), [], `${write.name}: no temp file left`);
  }
});

test('a rename that fails leaves no temp file, from either writer', async () => {
  const pack = built();
  for (const write of [writePackFiles, writePackFilesSync]) {
    const at = objectsDir();
    mkdirSync(join(at.pack, `pack-${pack.id}.idx`, 'in-the-way'), { recursive: true }); // the index cannot be renamed into place
    await assert.rejects(async () => write(at.pack, pack, new DirectorySync()), (error: NodeJS.ErrnoException) => Boolean(error.code), write.name);
    assert.deepEqual(at.leftovers(), [], `${write.name}: its temp files are removed`);
  }
});
