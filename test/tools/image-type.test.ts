// Which image a file is, by its first bytes only: PNG, JPEG, GIF and WebP; anything else (a name
// that says .png included) is not an image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageMediaType } from '../../src/tools/image-type.js';

test('the four formats the API takes, by their signatures', () => {
  assert.equal(imageMediaType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])), 'image/png');
  assert.equal(imageMediaType(Buffer.from([0xff, 0xd8, 0xff, 0xe0])), 'image/jpeg');
  assert.equal(imageMediaType(Buffer.from('GIF87a...', 'latin1')), 'image/gif');
  assert.equal(imageMediaType(Buffer.from('GIF89a...', 'latin1')), 'image/gif');
  assert.equal(imageMediaType(Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1')), 'image/webp');
});

test('anything else, or too few bytes to tell, is not an image', () => {
  assert.equal(imageMediaType(Buffer.from('RIFF\x00\x00\x00\x00WAVE', 'latin1')), undefined, 'a RIFF that is not WebP');
  assert.equal(imageMediaType(Buffer.from([0x89, 0x50, 0x4e])), undefined);
  assert.equal(imageMediaType(Buffer.from('hello')), undefined);
  assert.equal(imageMediaType(Buffer.alloc(0)), undefined);
});
