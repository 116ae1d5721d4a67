// A `fetch` for the SDK's client made on node:http and node:https, because Node's own fetch
// (undici: its wasm HTTP parser, Request, Headers and web-stream machinery) costs about a
// millisecond of CPU more per model request. It does what the SDK's code path asks of fetch and
// no more: the response has status, statusText, ok, url, headers (a real Headers), text(), json(),
// arrayBuffer() and a body the SDK reads as an async iterable (with getReader() for the rare
// reader that wants a web stream). Everything else (a Request object, a body that is a stream,
// form or blob, a URL that is not http: or https:) goes to the global fetch as before.
//
// The same as fetch: the request headers go out as the SDK made them, but with the lowercase
// names a Headers object iterates (undici sends the case it was given: `user-agent`, not
// `User-Agent`; HTTP header names are case-insensitive), without undici's own additions
// (`accept-language: *`, `sec-fetch-mode: cors`, `accept-encoding`: answers come uncompressed, so
// there is nothing to inflate), with node's `Host` and `Connection: keep-alive`. A refused or
// broken connection rejects as fetch does (TypeError "fetch failed", the system error as its
// cause), so the SDK retries it and reports an APIConnectionError; a connection cut in the middle
// of a body fails the body's read with TypeError "terminated"; an abort (the caller's signal, or
// the SDK's timeout) rejects the request, or fails the body's read, with the signal's reason (an
// AbortError). Redirects are followed as fetch follows them (up to 20). Proxy variables
// (HTTP_PROXY, ...) are ignored, as Node 20's fetch ignores them; fetch's list of ports it refuses
// to call (1, 6000, ...: "bad port") does not apply.
//
// Connections are kept alive, one pool per fetch (per client), and closed after 4 s idle (undici's
// default). A reused connection the server had already closed fails before any answer: that
// request is sent again once on a new connection instead of failing.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { abortReason } from './abort.js';

/** The fetch signature the SDK's client takes (its `fetch` option). */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** How long an idle kept-alive connection stays open: undici's default keep-alive timeout. */
export const IDLE_SOCKET_MS = 4_000;

const MAX_REDIRECTS = 20;
const NO_BODY_STATUS = new Set([204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
// Sent again on a new connection when a reused one turns out closed before it answered.
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** A fetch on node:http / node:https with its own pool of kept-alive connections. */
export function createHttpFetch(): Fetch {
  let http: HttpAgent | undefined;
  let https: HttpsAgent | undefined;
  const agentFor = (protocol: string) =>
    protocol === 'https:' ? (https ??= new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS })) : (http ??= new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }));
  return async function httpFetch(input, init = {}) {
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
    const body = requestBody(init.body);
    if (!url || body === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fetch(input, init);
    const call: Call = { url, method: (init.method ?? 'GET').toUpperCase(), headers: headerRecord(init.headers), body, signal: init.signal ?? undefined, redirect: init.redirect ?? 'follow' };
    return send(call, agentFor, 0, false);
  };
}

interface Call {
  url: URL;
  method: string;
  headers: OutgoingHttpHeaders;
  body: Buffer | null;
  signal: AbortSignal | undefined;
  redirect: 'follow' | 'manual' | 'error';
}

// The body as bytes, null for none, undefined for a kind this fetch leaves to the global one.
function requestBody(body: RequestInit['body']): Buffer | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return undefined;
}

function headerRecord(headers: RequestInit['headers']): OutgoingHttpHeaders {
  const record: OutgoingHttpHeaders = {};
  if (!headers) return record;
  if (headers instanceof Headers) {
    headers.forEach((value, name) => (record[name] = value));
    return record;
  }
  const pairs: Iterable<readonly [string, string]> = Array.isArray(headers) ? (headers as [string, string][]) : Object.entries(headers as Record<string, string>);
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    const had = record[key];
    record[key] = had === undefined ? String(value) : `${String(had)}, ${value}`;
  }
  return record;
}

function send(call: Call, agentFor: (protocol: string) => HttpAgent, redirects: number, retried: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const { url, method, body, signal } = call;
    if (signal?.aborted) return reject(abortReason(signal));
    const headers = body ? { ...call.headers, 'content-length': String(body.length) } : call.headers;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req: ClientRequest = request(url, { method, headers, agent: agentFor(url.protocol) });
    let res: IncomingMessage | undefined;
    const onAbort = () => {
      const reason = abortReason(signal!);
      res?.destroy(reason as Error);
      req.destroy(reason as Error);
    };
    const release = () => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    // An answer can take longer than the idle limit to start: that limit is for idle connections
    // only. No Nagle delay on a new connection (undici's choice too): a body's last segment goes at once.
    req.once('socket', (socket) => {
      socket.setTimeout(0);
      if (!req.reusedSocket) socket.setNoDelay(true);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (res) return; // the body's own read reports it
      release();
      if (signal?.aborted) return reject(abortReason(signal));
      if (req.reusedSocket && !retried && STALE_SOCKET_CODES.has(error.code ?? '')) return resolve(send(call, agentFor, redirects, true));
      reject(new TypeError('fetch failed', { cause: error }));
    });
    req.once('response', (incoming) => {
      res = incoming;
      // Its errors reach whoever reads the body (an abort before the read starts must not throw).
      incoming.on('error', () => {});
      incoming.once('close', release);
      const status = incoming.statusCode ?? 0;
      const location = incoming.headers.location;
      if (REDIRECT_STATUS.has(status) && location !== undefined && call.redirect !== 'manual') {
        incoming.resume();
        release();
        const to = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
        const refused = call.redirect === 'error' ? 'unexpected redirect' : redirects >= MAX_REDIRECTS ? 'redirect count exceeded' : !to ? `invalid redirect location ${location}` : undefined;
        if (refused || !to) return reject(new TypeError('fetch failed', { cause: new Error(refused) }));
        return resolve(send(redirected(call, status, to), agentFor, redirects + 1, false));
      }
      resolve(new HttpResponse(incoming, url.href, redirects > 0, method === 'HEAD' || NO_BODY_STATUS.has(status)) as unknown as Response);
    });
    req.end(body ?? undefined);
  });
}

// The next request of a redirect, by fetch's rules: 303 (and 301/302 after a POST) becomes a GET
// without a body; credentials are not sent to another origin.
function redirected(call: Call, status: number, to: URL): Call {
  const headers = { ...call.headers };
  let { method, body } = call;
  if (status === 303 ? method !== 'GET' && method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    method = 'GET';
    body = null;
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
  }
  if (to.origin !== call.url.origin) for (const name of ['authorization', 'proxy-authorization', 'cookie']) delete headers[name];
  return { ...call, url: to, method, body, headers };
}

// A response as the SDK reads it (see the top of the file).
class HttpResponse {
  readonly type = 'basic';
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers = new Headers();
  readonly body: HttpBody | null;

  constructor(
    incoming: IncomingMessage,
    readonly url: string,
    readonly redirected: boolean,
    empty: boolean,
  ) {
    this.status = incoming.statusCode ?? 0;
    this.statusText = incoming.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
    const raw = incoming.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) this.headers.append(raw[i]!, raw[i + 1]!);
    if (empty) incoming.resume();
    this.body = empty ? null : new HttpBody(incoming);
  }

  get bodyUsed(): boolean {
    return this.body?.used ?? false;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (!this.body) return new Uint8Array(0);
    if (this.body.used) throw new TypeError('Body is unusable: Body has already been read');
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  clone(): never {
    throw new TypeError('This response (savepoint, node:http) cannot be cloned');
  }
}

// The body: the socket's data as it comes, read once.
class HttpBody {
  used = false;

  constructor(private readonly incoming: IncomingMessage) {}

  get locked(): boolean {
    return this.used;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    this.used = true;
    const incoming = this.incoming;
    const chunks = incoming[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    return {
      next: () => chunks.next().catch((error: unknown) => Promise.reject(bodyError(error))),
      return: () => {
        discard(incoming);
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  /** A web stream reader, for code that reads the body that way. */
  getReader(): ReadableStreamDefaultReader<Uint8Array> {
    this.used = true;
    return (Readable.toWeb(this.incoming) as ReadableStream<Uint8Array>).getReader();
  }

  cancel(): Promise<void> {
    discard(this.incoming);
    return Promise.resolve();
  }
}

// A body read no further (the SDK's cancel before a retry, a reader that gave up): one that has
// all arrived and is not being read is drained, so its connection serves the next request; the
// rest close theirs (resume does nothing to a stream with a 'readable' listener: a reader's).
function discard(incoming: IncomingMessage): void {
  if (incoming.complete && incoming.listenerCount('readable') === 0) incoming.resume();
  else incoming.destroy();
}

// An abort passes as it is (the SDK ends a stream quietly on one); a broken connection is fetch's "terminated".
function bodyError(error: unknown): unknown {
  if ((error as { name?: unknown } | null)?.name === 'AbortError') return error;
  return new TypeError('terminated', { cause: error });
}
