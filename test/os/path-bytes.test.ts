// File names as bytes: every byte string survives pathFromBytes and pathToBytes unchanged, UTF-8
// names stay their plain text, and the escapes are drawn as \xNN on a terminal.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fsPath, hasRawBytes, pathByteLength, pathFromBytes, pathToBytes } from '../../src/os/path-bytes.js';
import { showControls } from '../../src/format/text.js';

describe('file names as bytes', () => {
  test('any bytes come back the same; UTF-8 names are their text', () => {
    const samples = [
      Buffer.from('café.txt'),
      Buffer.from('😀/日本.md'),
      Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]), // Latin-1 café.txt
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate: not valid UTF-8
      Buffer.from([0xc0, 0xaf]), // an overlong '/'
      Buffer.from([0xf4, 0x90, 0x80, 0x80]), // past U+10FFFF
      Buffer.from([0xe2, 0x82]), // a cut sequence
    ];
    for (const bytes of samples) assert.deepEqual(pathToBytes(pathFromBytes(bytes)), bytes, bytes.toString('hex'));
    for (let b = 0; b < 256; b++) assert.deepEqual(pathToBytes(pathFromBytes(Buffer.of(0x61, b, 0x62))), Buffer.of(0x61, b, 0x62));
    assert.equal(pathFromBytes(Buffer.from('café.txt')), 'café.txt');
    assert.equal(hasRawBytes('café.txt'), false);
    assert.equal(hasRawBytes('😀'), false, 'a surrogate pair is an ordinary character');
    assert.equal(fsPath('café.txt'), 'café.txt');
    const latin1 = pathFromBytes(samples[2]!);
    assert.equal(hasRawBytes(latin1), true);
    assert.deepEqual(fsPath(latin1), samples[2]);
    assert.equal(pathByteLength(latin1), 8);
  });

  test('the bytes that are not UTF-8 are shown as \\xNN, never sent to the terminal', () => {
    assert.equal(showControls(pathFromBytes(Buffer.from([0x78, 0xff, 0xfe, 0x2e, 0x74]))), 'x\\xff\\xfe.t');
    assert.equal(showControls('😀 café'), '😀 café');
  });
});
