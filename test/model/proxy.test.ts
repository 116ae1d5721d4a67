// Proxies as curl honours them, from the real CLI to the test Messages API on 127.0.0.1: an
// http:// address goes through HTTP_PROXY (or http_proxy) as absolute-URI requests, an https:// one
// through a CONNECT tunnel of HTTPS_PROXY (or https_proxy), a proxy named for one scheme is not
// used for the other, NO_PROXY names hosts reached directly, and a proxy that is down is a
// connection error in a sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { modelAddress, proxyFor } from '../../src/model/proxy.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, runCli } from '../helpers/cli.js';
import { countingProxy, httpsFront, selfSigned, tunnelProxy } from '../helpers/proxies.js';

const scratch = useScratch();
const tls = selfSigned(scratch);
const noTls = typeof tls === 'string' ? tls : false;

test('the proxy for an address is the variable of its scheme, lower-case first, as curl reads them', () => {
  assert.equal(proxyFor('https://api.anthropic.com', { HTTPS_PROXY: 'http://big:3128' }), 'http://big:3128');
  assert.equal(proxyFor('https://api.anthropic.com', { https_proxy: 'http://small:3128', HTTPS_PROXY: 'http://big:3128' }), 'http://small:3128');
  assert.equal(proxyFor('https://api.anthropic.com', { HTTP_PROXY: 'http://plain:3128', http_proxy: 'http://plain:3128' }), undefined, 'an http proxy is not used for https');
  assert.equal(proxyFor('http://127.0.0.1:8080', { HTTP_PROXY: 'http://plain:3128', HTTPS_PROXY: 'http://big:3128' }), 'http://plain:3128');
  assert.equal(proxyFor('http://127.0.0.1:8080', { HTTP_PROXY: '  ' }), undefined, 'an empty variable names no proxy');
  assert.equal(proxyFor('not an address', { HTTP_PROXY: 'http://plain:3128' }), undefined);
  assert.equal(modelAddress(undefined, {}), 'https://api.anthropic.com');
  assert.equal(modelAddress(undefined, { ANTHROPIC_BASE_URL: ' http://127.0.0.1:9 ' }), 'http://127.0.0.1:9');
  assert.equal(modelAddress('http://given:1', { ANTHROPIC_BASE_URL: 'http://env:2' }), 'http://given:1');
});

const PROXIED_TURNS = [{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read through the proxy.' }];
const NO_PROXY_VARIABLES = { HTTPS_PROXY: undefined, https_proxy: undefined, HTTP_PROXY: undefined, http_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

test('the lower-case http_proxy works as well, and NO_PROXY=127.0.0.1 sends nothing through the proxy', async () => {
  const repo = await scratch.repo({ 'README.md': '# direct\n' });
  const fake = await scratch.fake([...PROXIED_TURNS, ...PROXIED_TURNS]);
  const proxy = await countingProxy(scratch);
  const lower = await runCli(['run', '--yes', 'read it'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, http_proxy: proxy.url }) });
  assert.equal(lower.code, 0, lower.stdout + lower.stderr);
  assert.equal(proxy.requests.length, 2);
  const direct = await runCli(['run', '--yes', 'read it once more'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }) });
  assert.equal(direct.code, 0, direct.stdout + direct.stderr);
  assert.equal(fake.requests.length, 4, 'the model was asked');
  assert.equal(proxy.requests.length, 2, 'but not through the proxy');
});

// One test for both: the command run again once the proxy is up is a run whose every request goes through it.
test('a proxy that is down is a connection error that names the model API; once it is up the same command goes on, every model request through the proxy', async () => {
  const repo = await scratch.repo({ 'README.md': '# down\n' });
  const fake = await scratch.fake(PROXIED_TURNS);
  const down = await countingProxy(scratch);
  const port = new URL(down.url).port;
  const stopped = await new Promise<string>((resolve) => {
    const probe = createHttpServer();
    probe.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
      probe.close(() => resolve(url));
    });
  });
  const failed = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, HTTP_PROXY: stopped }) });
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /Could not connect to the model API/);
  assertNoStack(failed.stdout + failed.stderr);
  assert.equal(fake.requests.length, 0);
  const again = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, HTTP_PROXY: `http://127.0.0.1:${port}` }) });
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /Read through the proxy\./);
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(down.requests, [`POST ${fake.url}/v1/messages`, `POST ${fake.url}/v1/messages`]);
});


test('with HTTPS_PROXY set, every model request to an https address goes through a CONNECT tunnel of the proxy', { skip: noTls }, async () => {
  const { key, cert, certFile } = tls as Exclude<typeof tls, string>;
  const repo = await scratch.repo({ 'README.md': '# tunnelled\n' });
  const fake = await scratch.fake(PROXIED_TURNS);
  const front = await httpsFront(scratch, fake, { key, cert });
  const proxy = await tunnelProxy(scratch);
  const env = fakeEnv({ url: front.url }, { ...NO_PROXY_VARIABLES, HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: certFile });
  const run = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /Read through the proxy\./);
  assert.equal(fake.requests.length, 2);
  assert.ok(proxy.connects.length >= 1, 'the proxy was asked to tunnel');
  assert.deepEqual(new Set(proxy.connects), new Set([new URL(front.url).host]), 'to the model address and nowhere else');
  assert.deepEqual(proxy.requests, [], 'no request was sent to the proxy in the clear');
  assert.ok(front.peers().length >= 1 && front.peers().every((port) => proxy.tunnelPorts.includes(port)), 'every TLS connection to the model came through a tunnel');
});

test('HTTP_PROXY alone is not used for an https address, and NO_PROXY=127.0.0.1 bypasses https_proxy, as curl does', { skip: noTls }, async () => {
  const { key, cert, certFile } = tls as Exclude<typeof tls, string>;
  const repo = await scratch.repo({ 'README.md': '# direct\n' });
  const fake = await scratch.fake([...PROXIED_TURNS, ...PROXIED_TURNS]);
  const front = await httpsFront(scratch, fake, { key, cert });
  const proxy = await tunnelProxy(scratch);
  const base = fakeEnv({ url: front.url }, { ...NO_PROXY_VARIABLES, NODE_EXTRA_CA_CERTS: certFile });
  const plainOnly = await runCli(['run', '--yes', 'read it'], { cwd: repo.root, env: { ...base, HTTP_PROXY: proxy.url, http_proxy: proxy.url } });
  assert.equal(plainOnly.code, 0, plainOnly.stdout + plainOnly.stderr);
  const bypassed = await runCli(['run', '--yes', 'read it once more'], { cwd: repo.root, env: { ...base, https_proxy: proxy.url, NO_PROXY: '127.0.0.1' } });
  assert.equal(bypassed.code, 0, bypassed.stdout + bypassed.stderr);
  assert.equal(fake.requests.length, 4, 'the model was asked');
  assert.deepEqual([...proxy.connects, ...proxy.requests], [], 'but never through the proxy');
  assert.ok(front.peers().length >= 2, 'each run connected to the model itself');
});
