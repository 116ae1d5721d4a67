// Whether bubblewrap can start a sandbox on this machine: the sandbox tests skip, saying why, where it cannot.
import { spawnSync } from 'node:child_process';

/** Why the sandbox tests cannot run here, or undefined when bubblewrap starts a sandbox. */
export function noSandboxReason(): string | undefined {
  const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--die-with-parent', '--', 'true'], { encoding: 'utf8' });
  if (probe.error) return 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap';
  if (probe.status !== 0) return `bubblewrap cannot start a sandbox here: ${probe.stderr.trim()}`;
  return undefined;
}
