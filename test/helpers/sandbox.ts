// Whether bubblewrap can start a sandbox on this machine: the sandbox tests skip, saying why, where it cannot.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import type { Scratch } from './scratch.js';

/** Why the sandbox tests cannot run here, or undefined when bubblewrap starts a sandbox. */
export function noSandboxReason(): string | undefined {
  const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--die-with-parent', '--', 'true'], { encoding: 'utf8' });
  if (probe.error) return 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap';
  if (probe.status !== 0) return `bubblewrap cannot start a sandbox here: ${probe.stderr.trim()}`;
  return undefined;
}

/** A listener on 127.0.0.1 that counts the connections it gets (closed with `scratch`): a sandbox's network, seen from outside. */
export async function countingListener(scratch: Scratch): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.on('error', () => {}); // the probe hangs up at once
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scratch.defer(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('countingListener: the listener has no port');
  return { port: address.port, connections: () => count };
}
