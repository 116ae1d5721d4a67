// Started in place of a stdio MCP server's command: `node stdio-guard.js <command> [args...]`. It
// runs the server in a process group of its own, sharing this process's stdin, stdout and stderr,
// and takes that group down when savepoint is gone. A server is not bound to exit when its stdin
// closes (the SDK's stdio server stays up while a call or a timer is pending), so a kill -9 of
// savepoint would otherwise leave it running; the guard notices the parent's death (its parent pid
// changes) within half a second. A signal to the guard (the SDK's close) goes to the group too.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const parent = process.ppid;

if (!command) {
  process.stderr.write('stdio-guard: no command given\n');
  process.exit(2);
}

const child = spawn(command, args, { stdio: 'inherit', detached: true });

function stopGroup(): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return; // the group is gone already
  }
  // A server that ignores SIGTERM is killed outright; the guard stays up until then.
  setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    process.exit(1);
  }, 2000).unref();
}

child.on('error', (error) => {
  process.stderr.write(`could not start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stopGroup);

const watch = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(watch);
    stopGroup();
  }
}, 500);
