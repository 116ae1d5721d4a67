// What runs in place of a stdio MCP server's command: `node -e <GUARD_SCRIPT> <command> [args...]`.
// A server is not bound to exit when its stdin closes (the SDK's stdio server stays up while a call
// or a timer is pending), so a kill -9 of savepoint would otherwise leave it running. The guard is
// two small processes, because a kill -9 may take savepoint alone (`kill -9 <pid>`) or its whole
// process group with it (`kill -9 %1` in a shell, a CI job's timeout), and whatever is to notice the
// death must be outside the group that died:
//
//   outer  spawned by the SDK, in savepoint's process group. It starts the inner guard in a process
//          group of its own and relays its exit; when savepoint is gone (the outer's parent pid
//          changes) or a stop signal comes (the run's end, Ctrl-C), it tells the inner guard to stop.
//   inner  the leader of the server's group: it runs the server in that group, sharing the stdin,
//          stdout and stderr that the SDK reads, and takes the whole group down when told to or when
//          the outer guard is gone (its own parent pid changes), SIGKILL 2 s after SIGTERM.
//
// In the sandbox the guard's command is `bwrap … -- <server>` (connections.ts): both guards stay
// outside it, since a parent pid means nothing inside bubblewrap's pid namespace, while the inner
// guard's kill of its group still reaches the server inside (a process group spans the namespace),
// and bwrap's --die-with-parent takes the sandbox down with the inner guard besides.
//
// Either death is noticed within half a second. The script is a string, run with `node -e` (the
// inner guard is the same script, told its role by an environment variable it removes before the
// server starts), so it needs no file of its own beside the bundle.
// Tested in test/tools/mcp/connections.test.ts, test/tools/mcp/failures.test.ts.

/** The guard's source, for `node -e`; its arguments are the server's command and arguments. */
export const GUARD_SCRIPT = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const parent = process.ppid;
const inner = process.env.SAVEPOINT_MCP_GUARD === 'inner';
delete process.env.SAVEPOINT_MCP_GUARD;
if (!command) { process.stderr.write('stdio-guard: no command given\\n'); process.exit(2); }
const child = inner
  ? spawn(command, args, { stdio: 'inherit' })
  : spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', detached: true, env: { ...process.env, SAVEPOINT_MCP_GUARD: 'inner' } });
let stopping = false;
function stop() {
  if (stopping || !child.pid) return;
  stopping = true;
  // The inner guard signals its whole group (itself included, hence the flag); the outer tells the inner.
  try { process.kill(inner ? -process.pid : child.pid, 'SIGTERM'); } catch {}
  // A server that ignores SIGTERM is killed outright.
  setTimeout(() => { try { process.kill(-(inner ? process.pid : child.pid), 'SIGKILL'); } catch {} process.exit(1); }, inner ? 2000 : 3000).unref();
}
child.on('error', (error) => { process.stderr.write('could not start ' + command + ': ' + error.message + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stop);
const watch = setInterval(() => { if (process.ppid !== parent) { clearInterval(watch); stop(); } }, 500);
`;
