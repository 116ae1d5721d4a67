// web_fetch against a local HTTP server (two host names for one server: 127.0.0.1 and localhost,
// so a redirect can go to another domain): HTML as markdown, other text as it is, binary refused,
// a non-http scheme refused before anything is asked, a redirect to another domain judged again
// (and not followed when refused), the read stopped at max_bytes.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createWebFetchTool } from '../../src/tools/index.js';
import type { ToolResult } from '../../src/tools/index.js';

describe('web_fetch', () => {
  let server: Server;
  let port = 0;
  const seen: string[] = [];
  before(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.headers.host?.split(':')[0]}${request.url}`);
      const send = (type: string, body: string | Buffer, status = 200) => response.writeHead(status, { 'content-type': type }).end(body);
      switch (request.url) {
        case '/page':
          return send('text/html; charset=utf-8', '<html><head><title>T</title><script>alert(1)</script></head><body><h1>Release notes</h1><p>Fixed <a href="/bug">the bug</a> in <code>add()</code>.</p><ul><li>one</li><li>two</li></ul></body></html>');
        case '/data.json':
          return send('application/json', '{"answer": 42}');
        case '/logo.png':
          return send('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
        case '/big':
          return send('text/plain', 'z'.repeat(100_000));
        case '/missing':
          return send('text/plain', 'no such page', 404);
        case '/away':
          return response.writeHead(302, { location: `http://localhost:${port}/page` }).end();
        case '/near':
          return response.writeHead(301, { location: '/data.json' }).end();
        case '/loop':
          return response.writeHead(302, { location: '/loop' }).end();
        default:
          return send('text/plain', 'default', 404);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // No proxy from the test's environment: the local server is reached directly.
  const tool = createWebFetchTool({ env: {} });
  const at = (path: string, host = '127.0.0.1') => `http://${host}:${port}${path}`;

  test('an HTML page comes back as markdown, with its status and final URL; scripts are dropped', async () => {
    const result = await tool.execute({ url: at('/page') });
    assert.equal(result.isError, false, result.output);
    assert.match(result.output, new RegExp(`^URL: ${at('/page').replace(/[.]/g, '\\.')}\nStatus: 200 OK\nContent-Type: text/html \\(converted to markdown\\)\n`));
    assert.match(result.output, /^# Release notes$/m);
    assert.match(result.output, /Fixed \[the bug\]\(\/bug\) in `add\(\)`\./);
    assert.match(result.output, /^- +one$/m);
    assert.doesNotMatch(result.output, /alert|<h1>/);
    assert.match(result.summary, /^200, .* as markdown$/);
  });

  test('other text comes back as it is; a 404 is an error result with its body; binary is refused', async () => {
    const json = await tool.execute({ url: at('/data.json') });
    assert.equal(json.isError, false);
    assert.match(json.output, /\n\n\{"answer": 42\}$/);
    const missing = await tool.execute({ url: at('/missing') });
    assert.equal(missing.isError, true);
    assert.match(missing.output, /Status: 404 Not Found[\s\S]*no such page/);
    const image = await tool.execute({ url: at('/logo.png') });
    assert.equal(image.isError, true);
    assert.match(image.output, /image\/png, which is not text/);
  });

  test('the read stops at max_bytes and says so', async () => {
    const result = await tool.execute({ url: at('/big'), max_bytes: 1000 });
    assert.equal(result.isError, false);
    assert.equal((result.output.match(/z/g) ?? []).length, 1000);
    assert.match(result.output, /the read stopped at 1000 bytes: the page goes on/);
  });

  test('a non-http scheme is refused, nothing fetched', async () => {
    const before = seen.length;
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/x', 'not a url']) {
      const result = await tool.execute({ url });
      assert.equal(result.isError, true, url);
      assert.match(result.output, /http:\/\/ (and|or) https:\/\//, url);
    }
    assert.equal(seen.length, before);
  });

  test('a redirect within the domain is followed without asking; one to another domain is judged again', async () => {
    const asked: Record<string, unknown>[] = [];
    const near = await tool.execute({ url: at('/near') }, { judge: async (input) => (asked.push(input), undefined) });
    assert.match(near.output, new RegExp(`^URL: http://127\\.0\\.0\\.1:${port}/data\\.json\n`));
    assert.equal(asked.length, 0);

    const followed = await tool.execute({ url: at('/away') }, { judge: async (input) => (asked.push(input), undefined) });
    assert.deepEqual(asked, [{ url: at('/page', 'localhost') }]);
    assert.match(followed.output, new RegExp(`^URL: http://localhost:${port}/page\n`));

    const refusal: ToolResult = { isError: true, output: 'The user declined this tool call.', summary: 'declined by the user' };
    const before = seen.length;
    const declined = await tool.execute({ url: at('/away') }, { judge: async () => refusal });
    assert.equal(declined.isError, true);
    assert.match(declined.output, /redirected to http:\/\/localhost:\d+\/page \(another domain, localhost\), which was not followed:\nThe user declined/);
    assert.deepEqual(seen.slice(before), ['127.0.0.1/away']);
  });

  test('an http:// address goes through http_proxy as curl sends it (the absolute address asked of the proxy); NO_PROXY hosts are reached directly', async () => {
    const proxied: string[] = [];
    const proxy = createServer((request, response) => {
      proxied.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/plain' }).end('from the proxy');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const env = { http_proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, NO_PROXY: 'localhost' };
      const through = await createWebFetchTool({ env }).execute({ url: 'http://docs.example.invalid/guide' });
      assert.match(through.output, /\n\nfrom the proxy$/);
      assert.deepEqual(proxied, ['http://docs.example.invalid/guide']);
      const direct = await createWebFetchTool({ env }).execute({ url: at('/data.json', 'localhost') });
      assert.match(direct.output, /"answer": 42/);
      assert.equal(proxied.length, 1);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  test('a host that refuses the connection is an error result naming why', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await tool.execute({ url: `http://127.0.0.1:${gone}/` });
    assert.equal(result.isError, true);
    assert.match(result.output, new RegExp(`^Could not fetch http://127\\.0\\.0\\.1:${gone}/: ECONNREFUSED$`));
  });

  test('redirects stop after ten hops', async () => {
    const result = await tool.execute({ url: at('/loop') });
    assert.equal(result.isError, true);
    assert.match(result.output, /redirected more than 10 times/);
  });
});
