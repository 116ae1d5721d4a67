// What stands between savepoint and the model in the proxy and TLS tests, all on 127.0.0.1 and
// closed with the scratch: a self-signed certificate (made with openssl, trusted through
// NODE_EXTRA_CA_CERTS as a user would trust a company's gateway), an https front for the fake
// Messages API (TLS, then the bytes as they are to the fake's port), a forward proxy for http://
// addresses (absolute-URI requests), and a CONNECT proxy for https:// ones (a tunnel per CONNECT).
//
//   const tls = selfSigned(scratch);                       // or a string: why there is none
//   const front = await httpsFront(scratch, fake, tls);    // front.url is https://127.0.0.1:<port>
//   const proxy = await tunnelProxy(scratch);              // HTTPS_PROXY: proxy.url
//   proxy.connects;                                        // ['127.0.0.1:<port>', ...]
//   front.peers();                                         // the port each TLS connection came from
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import type { Scratch } from './scratch.js';

/** A key and a self-signed certificate for 127.0.0.1 (and the file the certificate is in), or why there is none. */
export function selfSigned(scratch: Scratch): { key: string; cert: string; certFile: string } | string {
  const dir = scratch.dir('savepoint-tls-');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  } catch (error) {
    return `openssl could not make a certificate (${(error as Error).message})`;
  }
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), certFile: join(dir, 'cert.pem') };
}

/** An https front for a plain-http server (the fake): how many TLS connections it took, and the remote port of each. */
export async function httpsFront(scratch: Scratch, fake: { url: string }, tls: { key: string; cert: string }): Promise<{ url: string; connections: () => number; peers: () => number[] }> {
  const peers: number[] = [];
  const open = new Set<Socket>();
  const server = createTlsServer(tls, (secure) => {
    peers.push(secure.remotePort ?? 0);
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
  return { url: `https://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => peers.length, peers: () => [...peers] };
}

/** A forward proxy for plain http, as a company's proxy is for http:// addresses: it takes absolute-URI requests, notes each, and sends it on. */
export async function countingProxy(scratch: Scratch): Promise<{ url: string; requests: string[] }> {
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

/**
 * A CONNECT proxy, as a company's proxy is for https:// addresses: each CONNECT it is asked (noted
 * in `connects`) opens a tunnel to the host and port named, whose local port is noted in
 * `tunnelPorts` (what the far end sees as its peer). Anything else it is asked is noted in `requests` and refused.
 */
export async function tunnelProxy(scratch: Scratch): Promise<{ url: string; connects: string[]; tunnelPorts: number[]; requests: string[] }> {
  const connects: string[] = [];
  const tunnelPorts: number[] = [];
  const requests: string[] = [];
  const open = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(405).end('CONNECT only');
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const far = connect(Number(port), host!, () => {
      tunnelPorts.push(far.localPort ?? 0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) far.write(head);
      far.pipe(client).pipe(far);
    });
    open.add(far).add(client);
    const end = () => (far.destroy(), client.destroy(), open.delete(far), open.delete(client));
    far.on('error', end).on('close', end);
    client.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scratch.defer(() => new Promise<void>((resolve) => (open.forEach((s) => s.destroy()), server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connects, tunnelPorts, requests };
}
