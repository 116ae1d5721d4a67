import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { truncateForModel } from '../../src/tools/truncate.js';

describe('truncateForModel', () => {
  it('returns a text within the limits unchanged', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`).join('\n');
    assert.equal(truncateForModel(text), text);
    assert.equal(truncateForModel(''), '');
  });

  it('keeps the head and the tail of a 100,000-line text with a note of what was cut', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i + 1} of the output`);
    const result = truncateForModel(lines.join('\n'));
    const shown = result.split('\n');
    assert.ok(shown.length <= 2000, `${shown.length} lines`);
    assert.ok(Buffer.byteLength(result) <= 50 * 1024, `${Buffer.byteLength(result)} bytes`);
    assert.equal(shown[0], 'line 1 of the output');
    assert.equal(shown.at(-1), 'line 100000 of the output');
    const note = shown.find((line) => line.startsWith('[...'));
    assert.ok(note);
    assert.match(note, /^\[\.\.\. [\d,]+ lines \([\d.]+ (MB|KB)\) cut from the middle; to see them, narrow the command \(grep, head, tail\) or read a range \(offset, limit\) \.\.\.\]$/);
    // Everything is accounted for: shown lines plus the cut count give the whole.
    const cut = Number(/([\d,]+) lines/.exec(note)![1]!.replace(/,/g, ''));
    assert.equal(shown.length - 1 + cut, 100_000);
    // Head and tail are contiguous runs of the original.
    const noteAt = shown.indexOf(note);
    assert.deepEqual(shown.slice(0, noteAt), lines.slice(0, noteAt));
    assert.deepEqual(shown.slice(noteAt + 1), lines.slice(lines.length - (shown.length - noteAt - 1)));
  });

  it('cuts by bytes when few lines are very long', () => {
    const text = Array.from({ length: 100 }, (_, i) => `${i}:${'x'.repeat(5000)}`).join('\n');
    const result = truncateForModel(text);
    assert.ok(Buffer.byteLength(result) <= 50 * 1024);
    assert.ok(result.startsWith('0:x'));
    assert.ok(result.endsWith(`99:${'x'.repeat(5000)}`));
    assert.match(result, /\[\.\.\. \d+ lines \(\d+\.\d KB\) cut/);
  });

  it('clips a single huge line without splitting a character', () => {
    const text = 'é'.repeat(100_000);
    const result = truncateForModel(text, { maxBytes: 1000 });
    assert.ok(Buffer.byteLength(result) <= 1000);
    assert.ok(!result.includes('\uFFFD'));
    const [head, note, tail] = result.split('\n');
    assert.match(head!, /^é+$/);
    assert.match(note!, /^\[\.\.\. 1 line \(/);
    assert.match(tail!, /^é+$/);
  });

  it('honours custom limits', () => {
    const text = Array.from({ length: 50 }, (_, i) => String(i)).join('\n');
    const result = truncateForModel(text, { maxLines: 11 });
    assert.deepEqual(result.split('\n'), ['0', '1', '2', '3', '4', '[... 40 lines (114 bytes) cut from the middle; to see them, narrow the command (grep, head, tail) or read a range (offset, limit) ...]', '45', '46', '47', '48', '49']);
  });
});
