// read_file of an image through the real CLI and the local Messages-API server: the model gets an
// image block with the file's bytes; the journal keeps them as a git blob in the run's tree (never
// as base64 inside the entry's JSON); after a kill -9 the identical command replays the read from
// that blob and sends the identical request; `show` prints a line for the image, never its bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertStepModes, baseEnv, fakeEnv, gitOut, heldTurns, journalJson, lastToolResults, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

// A PNG's signature and chunk header, then bytes of all kinds (NULs included).
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), Buffer.from('IHDR'), randomBytes(3056)]);

interface Block {
  type: string;
  text?: string;
  source?: { type: string; media_type: string; data: string };
}

describe('read_file of an image', () => {
  test('reaches the model as an image block, is kept as a blob, replays the identical request after kill -9', async () => {
    const repo = await scratch.repo();
    writeFileSync(join(repo.root, 'shot.png'), PNG);
    const turns: ScriptTurn[] = [{ tools: [{ name: 'read_file', input: { path: 'shot.png' } }] }, { text: 'A screenshot.' }];
    const hold = new Set([1]);
    const fake = await scratch.fake(heldTurns(turns, hold));
    const args = ['run', '--run', 'pic', 'describe the screenshot'];
    const first = startCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    await waitUntil(() => fake.requests.length >= 2, 'the model call after the read', { child: first });
    first.kill();
    await first.result;

    const [result] = lastToolResults(fake.requests[1]!);
    const content = result!.content as Block[];
    assert.deepEqual(content.map((block) => block.type), ['text', 'image']);
    assert.equal(content[0]!.text, '[image: shot.png, image/png, 3.0 KB]');
    assert.deepEqual(content[1]!.source, { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') });

    // The entry names the blob; the bytes are that blob, in the run's tree on the journal branch.
    const entry = await journalJson<{ result: { image: { mediaType: string; blob: string; bytes: number } } }>(repo.root, 'runs/pic/steps/000/000002-read_file.json');
    assert.equal(entry.result.image.mediaType, 'image/png');
    assert.equal(entry.result.image.bytes, PNG.length);
    const entryText = await gitOut(repo.root, ['cat-file', 'blob', 'agent-journal:runs/pic/steps/000/000002-read_file.json']);
    assert.ok(!entryText.includes(PNG.toString('base64').slice(0, 64)), 'no base64 of the image inside the entry');
    assert.equal(await gitOut(repo.root, ['rev-parse', 'agent-journal:runs/pic/blobs/' + entry.result.image.blob]), entry.result.image.blob);
    assert.equal(await gitOut(repo.root, ['cat-file', '-t', entry.result.image.blob]), 'blob');
    const stored = execFileSync('git', ['cat-file', 'blob', entry.result.image.blob], { cwd: repo.root, env: baseEnv() });
    assert.ok(stored.equals(PNG), 'the blob holds the file\'s bytes');

    // The identical command replays the read (the recorded result holds no bytes: they come from the blob).
    hold.clear();
    const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 2);
    const unmarked = (messages: unknown[]) => JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === 'cache_control' ? undefined : value))) as unknown[];
    assert.deepEqual(unmarked(fake.requests.at(-1)!.messages), unmarked(fake.requests[1]!.messages), 'the identical request');

    // show prints the step's line for the image, never its bytes.
    const shown = await runCli(['show', 'pic', '2'], { cwd: repo.root, env: {} });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /\[image: shot\.png, image\/png, 3\.0 KB\]/);
    assert.match(shown.stdout, new RegExp(`image +image/png, 3\\.0 KB, kept as blob ${entry.result.image.blob} \\(runs/pic/blobs/`));
    assert.ok(!shown.stdout.includes(PNG.toString('base64').slice(0, 64)));
  });
});
