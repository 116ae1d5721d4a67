// The pack reader: a pack read whole is checked once against its SHA-1 trailers and then trusted
// object by object; a damaged pack fails that check, and then no read hands back wrong bytes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JournalStore } from '../../src/index.js';
import { gitOut } from '../helpers/git.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();
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

    // Damage the pack's middle: the trailer check fails, each object is then hashed, and a read
    // either gives the right bytes or fails.
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
});
