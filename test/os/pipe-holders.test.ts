import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { openPipeId, pipeHolders } from '../../src/os/pipe-holders.js';

const linux = process.platform === 'linux' ? undefined : 'needs /proc';

test('names every process holding a pipe, with its process group and command line, and nobody once they are gone', { skip: linux }, async () => {
  // A shell in a group of its own whose child (a sleep) shares its output pipe.
  const child = spawn('bash', ['-c', 'sleep 30 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  const [line] = (await once(child.stdout!.setEncoding('utf8'), 'data')) as [string];
  const sleeper = Number(line.trim());
  try {
    const id = openPipeId(child.pid!, 1);
    assert.match(id ?? '', /^(pipe|socket):\[\d+\]$/);
    assert.equal(openPipeId(child.pid!, 0), undefined, 'stdin is /dev/null: not a pipe');
    const holders = pipeHolders([id!]).sort((a, b) => a.pid - b.pid);
    assert.deepEqual(holders, [
      { pid: child.pid, group: child.pid, command: 'bash -c sleep 30 & echo $!; wait' },
      { pid: sleeper, group: child.pid, command: 'sleep 30' },
    ].sort((a, b) => a.pid! - b.pid!));
    process.kill(-child.pid!, 'SIGKILL');
    await once(child, 'close');
    assert.deepEqual(pipeHolders([id!]), []);
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

test('finds nothing for no pipes, and no pipe on a process that does not exist', () => {
  assert.deepEqual(pipeHolders([]), []);
  assert.equal(openPipeId(2 ** 22 + 12345, 1), undefined);
});
