// The live model from the real CLI, through the SDK's own fetch: an https base URL (a self-signed
// certificate made here with openssl, trusted through NODE_EXTRA_CA_CERTS as a user would trust a
// company's gateway), with every turn on one TLS connection; a certificate that is not trusted is
// a connection error in fetch's words; Ctrl-C in the middle of a streamed answer stops the run at
// once, as an interrupt, and the same command then finishes it. Proxies: proxy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAnthropicProvider } from '../../src/model/anthropic.js';
import { ModelError } from '../../src/errors/index.js';
import { useScratch } from '../helpers/scratch.js';
import { assertNoStack, fakeEnv, runCli, waitUntil } from '../helpers/cli.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { httpsFront, selfSigned } from '../helpers/proxies.js';
import { plain, SKIP_NO_PTY, startOnPty } from '../helpers/pty.js';

const scratch = useScratch();
const tls = selfSigned(scratch);
const noTls = typeof tls === 'string' ? tls : false;

test('an https base URL: the CLI runs a conversation over one TLS connection', { skip: noTls }, async () => {
  const { key, cert, certFile } = tls as Exclude<typeof tls, string>;
  const repo = await scratch.repo({ 'README.md': '# secure\n' });
  const fake = await scratch.fake([{ text: 'Reading.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Read it twice.', tools: [{ name: 'read_file', input: { path: 'README.md' } }] }, { text: 'All read over TLS.' }]);
  const front = await httpsFront(scratch, fake, { key, cert });
  const run = await runCli(['run', '--yes', 'read the readme'], { cwd: repo.root, env: fakeEnv({ url: front.url }, { NODE_EXTRA_CA_CERTS: certFile }) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /All read over TLS\./);
  assert.equal(fake.requests.length, 3);
  assert.equal(front.connections(), 1, 'one kept-alive TLS connection for the three turns');
});

test('an https server whose certificate is not trusted is a connection error that says so', { skip: noTls }, async () => {
  const { key, cert } = tls as Exclude<typeof tls, string>;
  const fake = await scratch.fake([{ text: 'never' }]);
  const front = await httpsFront(scratch, fake, { key, cert });
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
  first.type('\x03');
  const stopped = await first.result;
  assert.equal(stopped.code, 130, plain(stopped.out));
  // The words come two seconds apart: the last one never shown, the run did not wait for the answer.
  assert.doesNotMatch(plain(stopped.out), /ten/, 'the run did not wait for the answer to end');
  assertNoStack(plain(stopped.out));
  slow = false;
  const again = await runCli(args, { cwd: repo.root, env: fakeEnv(fake) });
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /Finished after the interrupt\./);
});
