// Writing a file whole or not at all: a temp file beside it (or where the caller says), every byte
// written, renamed over the target, the directories that gained names made and synced; a failed
// write leaves the old file and no temp file behind.
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DiskFullError } from '../../src/errors/index.js';
import { asWriteFailure } from '../../src/errors/disk-full.js';
import { DirectorySync, writeFileAtomically, writeFileDurably, writeFully } from '../../src/os/durable-file.js';
import { useScratch } from '../helpers/scratch.js';

describe('durable files', () => {
  const scratch = useScratch();

  it('writes a new file whole, with its mode, in directories it makes, and replaces an old one; no temp file is left', () => {
    const dir = scratch.dir('savepoint-durable-');
    const path = join(dir, 'a', 'b', 'record.json');
    writeFileDurably(path, '{"v":1}', { mode: 0o600 });
    assert.equal(readFileSync(path, 'utf8'), '{"v":1}');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    writeFileDurably(path, new Uint8Array([1, 2, 3]));
    assert.deepEqual([...readFileSync(path)], [1, 2, 3]);
    writeFileAtomically(join(dir, 'live.json'), 'running');
    assert.equal(readFileSync(join(dir, 'live.json'), 'utf8'), 'running');
    assert.deepEqual(readdirSync(join(dir, 'a', 'b')), ['record.json']);
    assert.deepEqual(readdirSync(dir).sort(), ['a', 'live.json']);
  });

  it('writes through a temp file in another directory, making the target\'s directory when it is missing', () => {
    const dir = scratch.dir('savepoint-durable-');
    mkdirSync(join(dir, 'tmp'));
    const dirs = new DirectorySync();
    writeFileDurably(join(dir, 'objects', 'ab', 'cdef'), 'object', { temp: join(dir, 'tmp', 'obj-1'), dirs });
    dirs.flushSync();
    assert.equal(readFileSync(join(dir, 'objects', 'ab', 'cdef'), 'utf8'), 'object');
    assert.deepEqual(readdirSync(join(dir, 'tmp')), []);
  });

  it('a rename that fails (a directory where the file should be) leaves that directory as it was and removes the temp file', () => {
    const dir = scratch.dir('savepoint-durable-');
    mkdirSync(join(dir, 'taken'));
    writeFileSync(join(dir, 'taken', 'inside'), 'kept');
    assert.throws(() => writeFileDurably(join(dir, 'taken'), 'new'), (error: NodeJS.ErrnoException) => ['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes(error.code!));
    assert.deepEqual(readdirSync(dir), ['taken']);
    assert.equal(readFileSync(join(dir, 'taken', 'inside'), 'utf8'), 'kept');
  });

  it('a write of nothing with bytes left is a full disk, which reaches the user as DiskFullError', () => {
    const fd = openSync('/dev/full', 'w');
    try {
      assert.throws(() => writeFully(fd, Buffer.from('bytes')), (error: NodeJS.ErrnoException) => {
        assert.equal(error.code, 'ENOSPC');
        const failure = asWriteFailure(error, '/repo/.git/objects/pack/x.pack');
        assert.ok(failure instanceof DiskFullError);
        assert.equal(failure.code, 'EDISKFULL');
        return true;
      });
    } finally {
      closeSync(fd);
    }
  });

  it('skips a noted directory that vanished since (git gc removes the ones it emptied), and two flushes at once both finish', async () => {
    const dir = scratch.dir('savepoint-durable-');
    const dirs = new DirectorySync();
    dirs.makeDir(join(dir, 'x', 'y'));
    dirs.add(join(dir, 'gone'));
    dirs.flushSync();
    dirs.add(join(dir, 'x'));
    dirs.add(join(dir, 'also-gone'));
    await Promise.all([dirs.flush(), dirs.flush()]);
    writeFileDurably(join(dir, 'x', 'y', 'f'), 'f', { dirs });
    await dirs.flush();
    assert.equal(readFileSync(join(dir, 'x', 'y', 'f'), 'utf8'), 'f');
  });
});
