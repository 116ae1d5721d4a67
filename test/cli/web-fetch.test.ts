// web_fetch through the real CLI, the local Messages-API server and a local HTTP server that counts
// what it is asked: a domain rule in the person's settings allows a fetch with no terminal to ask
// on; a redirect to another domain is judged again (a deny rule on it holds; no rule and no
// terminal: not followed, the model is told); after a kill -9 the identical command hands back the
// page as it was first fetched and fetches nothing, though the server's page changed. With no rule
// a fetch asks, and with no terminal the run stops as any call needing approval does, nothing fetched.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { assertNoStack, assertStepModes, fakeEnv, heldTurns, lastToolResults, resultText, runCli, startCli, waitUntil } from '../helpers/cli.js';
import { useScratch } from '../helpers/scratch.js';
import { userHomeIn } from '../helpers/trust.js';

const scratch = useScratch();

describe('web_fetch from the CLI', { concurrency: true }, () => {
  let server: Server;
  let port = 0;
  let page = '<html><body><h1>Version one</h1><p>The <em>first</em> page.</p></body></html>';
  const asked = new Map<string, number>();
  before(async () => {
    server = createServer((request, response) => {
      asked.set(request.url ?? '', (asked.get(request.url ?? '') ?? 0) + 1);
      if (request.url === '/away') return response.writeHead(302, { location: `http://localhost:${port}/notes` }).end();
      if (request.url === '/elsewhere') return response.writeHead(302, { location: `http://127.0.0.2:${port}/notes` }).end();
      response.writeHead(200, { 'content-type': 'text/html' }).end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a domain rule allows it; a redirect elsewhere is judged again (a deny rule holds, no rule and no terminal: not followed); after kill -9 the first page comes back, nothing fetched again', async () => {
    const repo = await scratch.repo();
    const turns: ScriptTurn[] = [
      { tools: [{ name: 'web_fetch', input: { url: `http://127.0.0.1:${port}/notes` } }] },
      { tools: [{ name: 'web_fetch', input: { url: `http://127.0.0.1:${port}/away` } }] },
      { tools: [{ name: 'web_fetch', input: { url: `http://127.0.0.1:${port}/elsewhere` } }] },
      { text: 'Read it.' },
    ];
    // The fourth model call (after the three fetches are recorded) hangs until the CLI is killed.
    const hold = new Set([3]);
    const fake = await scratch.fake(heldTurns(turns, hold));
    // Claude Code's spelling, in the person's own settings: no terminal, no --yes, and it runs.
    // A deny rule holds on a redirect's domain too.
    const env = { ...fakeEnv(fake), ...userHomeIn(scratch, { permissions: { allow: ['WebFetch(domain:127.0.0.1)'], deny: ['web_fetch(domain:localhost)'] } }) };
    const args = ['run', '--run', 'web', 'read the release notes'];
    const first = startCli(args, { cwd: repo.root, env });
    await waitUntil(() => fake.requests.length >= 4, 'the model call after the fetches', { child: first });
    first.kill();
    await first.result;
    assert.deepEqual(Object.fromEntries(asked), { '/notes': 1, '/away': 1, '/elsewhere': 1 });

    page = '<html><body><h1>Version two</h1></body></html>';
    hold.clear();
    const again = await runCli(args, { cwd: repo.root, env });
    assert.equal(again.code, 0, again.stderr);
    assertStepModes(again.stdout, 6);
    // Nothing was fetched again: the page and the refused redirects are the journal's.
    assert.deepEqual(Object.fromEntries(asked), { '/notes': 1, '/away': 1, '/elsewhere': 1 });
    const last = fake.requests.at(-1)!;
    const [notes] = lastToolResults({ ...last, messages: last.messages.slice(0, -4) });
    const [away] = lastToolResults({ ...last, messages: last.messages.slice(0, -2) });
    const [elsewhere] = lastToolResults(last);
    assert.match(resultText(notes!), /^URL: http:\/\/127\.0\.0\.1:\d+\/notes\nStatus: 200 OK\n[\s\S]*# Version one\n\nThe _first_ page\.$/);
    assert.equal(away!.is_error, true);
    assert.match(resultText(away!), /redirected to http:\/\/localhost:\d+\/notes \(another domain, localhost\), which was not followed:\nThis tool call is not allowed here: the user's settings deny it \(rule "web_fetch\(domain:localhost\)"\)/);
    assert.equal(elsewhere!.is_error, true);
    assert.match(resultText(elsewhere!), /\(another domain, 127\.0\.0\.2\), which was not followed:\nA fetch from 127\.0\.0\.2 needs approval, and there is no terminal to ask on; a rule web_fetch\(domain:127\.0\.0\.2\)/);
  });

  test('with no rule and no terminal, the run stops as any call needing approval does, nothing fetched', async () => {
    const repo = await scratch.repo();
    const fake = await scratch.fake([{ tools: [{ name: 'web_fetch', input: { url: `http://127.0.0.1:${port}/unruled` } }] }, { text: 'x' }]);
    const result = await runCli(['run', 'read it'], { cwd: repo.root, env: { ...fakeEnv(fake), ...userHomeIn(scratch) } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /The next step \(web_fetch http:\/\/127\.0\.0\.1:\d+\/unruled\) needs approval, and there is no terminal to ask on/);
    assertNoStack(result.stderr);
    assert.equal(asked.get('/unruled'), undefined);
  });
});
