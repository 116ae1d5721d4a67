// How this process runs commands: unconfined when the caller waived the sandbox, in bubblewrap when
// it can start, else unconfined only on the person's yes, and otherwise ENOSANDBOX with the remedy.
// bubblewrap is made missing here (no PATH for this process's probe), which the probe keeps for the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SandboxUnavailableError } from '../../src/errors/index.js';
import { chooseSandbox } from '../../src/session/sandbox.js';
import { useScratch } from '../helpers/scratch.js';

const scratch = useScratch();

test('--no-sandbox runs unconfined without probing, with the network and git writes', async () => {
  assert.deepEqual(await chooseSandbox('/nowhere', { use: false, network: false }), { sandbox: { kind: 'none', network: true, gitWrites: true }, choice: 'flag' });
});

test('without bubblewrap: unconfined on the yes, refused with the reason and remedy otherwise', async () => {
  const root = scratch.dir('savepoint-sandbox-');
  const path = process.env.PATH;
  process.env.PATH = scratch.dir('savepoint-empty-path-');
  try {
    let told: [string, string] | undefined;
    const asked = await chooseSandbox(root, { network: false }, async (reason, remedy) => ((told = [reason, remedy]), true));
    assert.deepEqual(asked, { sandbox: { kind: 'none', network: true, gitWrites: true }, choice: 'asked' });
    assert.equal(told![0], 'bubblewrap (bwrap) is not installed');
    await assert.rejects(chooseSandbox(root, {}, async () => false), (error: unknown) => error instanceof SandboxUnavailableError && error.code === 'ENOSANDBOX' && /bubblewrap \(bwrap\) is not installed/.test(error.message) && error.message.includes(told![1]));
    await assert.rejects(chooseSandbox(root), SandboxUnavailableError);
  } finally {
    process.env.PATH = path;
  }
});
