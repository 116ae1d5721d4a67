// What runs in place of a stdio MCP server's command: `node -e <GUARD_SCRIPT> <command> [args...]`.
// It runs the server in a process group of its own, sharing the guard's stdin, stdout and stderr,
// and takes that group down when savepoint is gone. A server is not bound to exit when its stdin
// closes (the SDK's stdio server stays up while a call or a timer is pending), so a kill -9 of
// savepoint would otherwise leave it running; the guard notices the parent's death (its parent pid
// changes) within half a second. A signal to the guard (the run's end) goes to the group too.
// The script is a string, run with `node -e`, so it needs no file of its own beside the bundle.

/** The guard's source, for `node -e`; its arguments are the server's command and arguments. */
export const GUARD_SCRIPT = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const parent = process.ppid;
if (!command) { process.stderr.write('stdio-guard: no command given\\n'); process.exit(2); }
const child = spawn(command, args, { stdio: 'inherit', detached: true });
function stopGroup() {
  if (!child.pid) return;
  try { process.kill(-child.pid, 'SIGTERM'); } catch { return; }
  // A server that ignores SIGTERM is killed outright.
  setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} process.exit(1); }, 2000).unref();
}
child.on('error', (error) => { process.stderr.write('could not start ' + command + ': ' + error.message + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stopGroup);
const watch = setInterval(() => { if (process.ppid !== parent) { clearInterval(watch); stopGroup(); } }, 500);
`;
