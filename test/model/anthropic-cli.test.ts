// The live model from the real CLI, through the SDK's own fetch: an https base URL (a self-signed
// certificate made here with openssl, trusted through NODE_EXTRA_CA_CERTS as a user would trust a
// company's gateway), with every turn on one TLS connection; a certificate that is not trusted is
// a connection error in fetch's words; Ctrl-C in the middle of a streamed answer stops the run at
// once, as an interrupt, and the same command then finishes it; and a proxy named by HTTP_PROXY
// carries every model request, unless NO_PROXY names the host, as curl does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { createAnthropicProvider } from '../../src/model/anthropic.js';
import { ModelError } from '../../src/errors/index.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, runCli, waitUntil } from '../helpers/cli.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { plain, SKIP_NO_PTY, startOnPty } from '../helpers/pty.js';

const scratch = useScratch();

// A key and a self-signed certificate for 127.0.0.1, or why there is none.
function selfSigned(): { key: string; cert: string; certFile: string } | string {
  const dir = scratch.dir('savepoint-tls-');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  } catch (error) {
    return `openssl could not make a certificate (${(error as Error).message})`;
  }
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), certFile: join(dir, 'cert.pem') };
}

// An https front for the fake: TLS with `tls`, then the bytes as they are to the fake's port.
async function httpsFront(fake: FakeAnthropic, tls: { key: string; cert: string }): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const open = new Set<Socket>();
  const server = createTlsServer(tls, (secure) => {
    connections++;
    const plain = connect(Number(new URL(fake.url).port), '127.0.0.1');
    open.add(plain);
    secure.pipe(plain).pipe(secure);
    const end = () => (secure.destroy(), plain.destroy(), open.delete(plain));
    secure.on('error', end).on('close', end);
    plain.on('error', end).on('close', end);
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scratch.defer(() => new Promise<void>((resolve) => (open.forEach((s) => s.destroy()), server.close(() => resolve()))));
  return { url: `https://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => connections };
}

const tls = selfSigned();
const noTls = typeof tls === 'string' ? tls : false;

test('an https base URL: the CLI runs a conversation over one TLS connection', { skip: noTls }, async () => {
  const { key, cert, certFile } = tls as Exclude<typeof tls, string>;
  const repo = await scratch.repo({ 'README.md': '# secure\n' });
  const fake = await scratch.fake([{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read it twice.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'All read over TLS.' }]);
  const front = await httpsFront(fake, { key, cert });
  const run = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv({ url: front.url }, { NODE_EXTRA_CA_CERTS: certFile }) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /All read over TLS\./);
  assert.equal(fake.requests.length, 3);
  assert.equal(front.connections(), 1, 'one kept-alive TLS connection for the three turns');
});

test('an https server whose certificate is not trusted is a connection error that says so', { skip: noTls }, async () => {
  const { key, cert } = tls as Exclude<typeof tls, string>;
  const fake = await scratch.fake([{ text: 'never' }]);
  const front = await httpsFront(fake, { key, cert });
  const provider = createAnthropicProvider({ baseURL: front.url, apiKey: 'test-key', maxRetries: 0 });
  const error = await provider.complete({ model: 'claude-test', system: '', tools: [], maxTokens: 16, messages: [{ role: 'user', content: 'hi' }] }).then(() => assert.fail('expected a ModelError'), (e: unknown) => e);
  assert.ok(error instanceof ModelError, String(error));
  assert.equal(error.data.kind, 'connection');
  assert.equal(error.data.code, 'self-signed certificate');
  assert.equal(fake.requests.length, 0);
});

test('Ctrl-C in the middle of a streamed answer stops the run at once, and the same command finishes it', { skip: SKIP_NO_PTY }, async () => {
  const repo = await scratch.repo({ 'README.md': '# app\n' });
  let slow = true;
  const fake = await startFakeAnthropic({ turns: () => (slow ? { text: 'one two three four five six seven eight nine ten', delayMs: 20_000 } : { text: 'Finished after the interrupt.' }) });
  scratch.defer(() => fake.close());
  const args = ['run', '--yes', 'say something'];
  // On a terminal, where the answer streams and Ctrl-C is the terminal's SIGINT.
  const first = startOnPty(args, repo.root, [], { env: fakeEnv(fake) as Record<string, string> });
  await waitUntil(() => plain(first.out).includes('one'), 'the answer to start streaming');
  const interrupted = Date.now();
  first.type('\x03');
  const stopped = await first.result;
  assert.equal(stopped.code, 130, plain(stopped.out));
  assert.ok(Date.now() - interrupted < 5_000, 'the run did not wait for the answer to end');
  assert.doesNotMatch(plain(stopped.out), /ten/);
  assertNoStack(plain(stopped.out));
  slow = false;
  const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /Finished after the interrupt\./);
});

// A forward proxy for plain http on 127.0.0.1, as a company's proxy is for http:// addresses: it
// takes absolute-URI requests ("POST http://host:port/v1/messages"), counts them, and sends each on.
async function countingProxy(): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URI expected');
      return;
    }
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scratch.defer(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests };
}

const PROXIED_TURNS = [{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read through the proxy.' }];
const NO_PROXY_VARIABLES = { HTTPS_PROXY: undefined, https_proxy: undefined, HTTP_PROXY: undefined, http_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

test('with HTTP_PROXY set, every model request of a run goes through the proxy', async () => {
  const repo = await scratch.repo({ 'README.md': '# proxied\n' });
  const fake = await scratch.fake(PROXIED_TURNS);
  const proxy = await countingProxy();
  const run = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, HTTP_PROXY: proxy.url }) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /Read through the proxy\./);
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(proxy.requests, [`POST ${fake.url}/v1/messages`, `POST ${fake.url}/v1/messages`]);
});

test('the lower-case http_proxy works as well, and NO_PROXY=127.0.0.1 sends nothing through the proxy', async () => {
  const repo = await scratch.repo({ 'README.md': '# direct\n' });
  const fake = await scratch.fake([...PROXIED_TURNS, ...PROXIED_TURNS]);
  const proxy = await countingProxy();
  const lower = await runCli(['run', '--yes', 'read it'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, http_proxy: proxy.url }) });
  assert.equal(lower.code, 0, lower.stdout + lower.stderr);
  assert.equal(proxy.requests.length, 2);
  const direct = await runCli(['run', '--yes', 'read it once more'], { cwd: repo.root, env: fakeEnv(fake, { ...NO_PROXY_VARIABLES, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }) });
  assert.equal(direct.code, 0, direct.stdout + direct.stderr);
  assert.equal(fake.requests.length, 4, 'the model was asked');
  assert.equal(proxy.requests.length, 2, 'but not through the proxy');
});

test('a proxy that is down is a connection error that names the model API, and the same command goes on once it is up', async () => {
  const repo = await scratch.repo({ 'README.md': '# down\n' });
  const fake = await scratch.fake(PROXIED_TURNS);
  const down = await countingProxy();
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
  assert.equal(down.requests.length, 2);
});
