// A real smart-HTTP git remote on 127.0.0.1: `git http-backend` (git's own CGI program, from
// `git --exec-path`) behind a small node:http server that a test can stop and start again on the
// same port, slow (each response held back), make refuse (an HTTP status instead of git's answer),
// make hang (take the request, never answer), or make lie (let git do the push, then answer 500,
// as a proxy that timed out would). It counts the requests it saw, so a test can count round-trips.
//
//   const remote = await startGitHttpServer(scratch.dir('savepoint-remote-'));
//   await gitOut(root, ['remote', 'add', 'origin', remote.url]);
//   remote.behave({ delayMs: 1000 });   // every answer a second late
//   await remote.stop(); await remote.start();
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';

/** How the server answers from now on (each field kept until changed). */
export interface GitHttpBehaviour {
  /** Hold every response back this long before sending it. */
  delayMs?: number;
  /** Answer every request with this HTTP status (500, 403, ...) and no git at all. */
  refuse?: number;
  /** Take every request and never answer it (the connection stays open). */
  hang?: boolean;
  /** Run git for a push (receive-pack POST), then answer this status instead of git's answer. */
  failAfterPush?: number;
}

/** A smart-HTTP git server over one bare repository. */
export interface GitHttpServer {
  /** The remote's URL, for `git remote add`. */
  url: string;
  /** The bare repository the server serves (git commands on it see what was pushed). */
  dir: string;
  /** Every request seen, in order: method and path (`POST /remote.git/git-receive-pack`). */
  requests: string[];
  /** How many pushes reached git (receive-pack POSTs answered by git-http-backend). */
  pushes(): number;
  behave(behaviour: GitHttpBehaviour): void;
  /** Stops listening and drops open connections: the remote is down (connection refused). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

const BACKEND = join(spawnSync('git', ['--exec-path'], { encoding: 'utf8' }).stdout.trim(), 'git-http-backend');

/** Makes a bare repository `remote.git` in `dir` (receive-pack on) and serves it on 127.0.0.1. */
export async function startGitHttpServer(dir: string): Promise<GitHttpServer> {
  const repo = join(dir, 'remote.git');
  spawnSync('git', ['init', '-q', '--bare', repo], { encoding: 'utf8' });
  spawnSync('git', ['--git-dir', repo, 'config', 'http.receivepack', 'true']);
  let behaviour: GitHttpBehaviour = {};
  const requests: string[] = [];
  let pushes = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const now = behaviour;
    if (now.hang) return; // the connection stays open, unanswered
    const later = (send: () => void) => (now.delayMs ? setTimeout(send, now.delayMs) : send());
    if (now.refuse) {
      request.resume();
      later(() => response.writeHead(now.refuse!, { 'content-type': 'text/plain' }).end(`refused (${now.refuse})\n`));
      return;
    }
    const isPush = request.method === 'POST' && request.url!.split('?')[0]!.endsWith('/git-receive-pack');
    cgi(dir, request, (status, headers, body) => {
      if (isPush) pushes++;
      if (isPush && now.failAfterPush) later(() => response.writeHead(now.failAfterPush!, { 'content-type': 'text/plain' }).end('the proxy gave up\n'));
      else later(() => response.writeHead(status, headers).end(body));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return {
    url: `http://127.0.0.1:${port}/remote.git`,
    dir: repo,
    requests,
    pushes: () => pushes,
    behave(next) {
      behaviour = { ...behaviour, ...next };
    },
    stop,
    start: () => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve())),
    close: stop,
  };
}

// Runs git-http-backend for one request as CGI: the request's body on its stdin, its answer
// (CGI headers, a blank line, the body) on its stdout.
function cgi(root: string, request: IncomingMessage, done: (status: number, headers: Record<string, string>, body: Buffer) => void): void {
  const [path, query = ''] = request.url!.split('?') as [string, string?];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: request.method,
    PATH_INFO: decodeURIComponent(path),
    QUERY_STRING: query,
    REMOTE_ADDR: '127.0.0.1',
    REMOTE_USER: 'test',
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    ...(request.headers['content-length'] ? { CONTENT_LENGTH: request.headers['content-length'] } : {}),
    ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] } : {}),
    ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
  };
  const child = spawn(BACKEND, [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stdin.on('error', () => {}); // the backend may answer (an error) before reading it all
  request.pipe(child.stdin);
  child.on('close', () => {
    const all = Buffer.concat(out);
    let end = all.indexOf('\r\n\r\n');
    let skip = 4;
    if (end < 0) [end, skip] = [all.indexOf('\n\n'), 2];
    const head = end < 0 ? '' : all.subarray(0, end).toString('latin1');
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    done(end < 0 ? 500 : status, headers, end < 0 ? all : all.subarray(end + skip));
  });
}
