// web_fetch: a page from the web, read by savepoint itself (never by a sandboxed command), as the
// model's text: HTML converted to markdown, other text as it is, binary refused. It is a read: safe
// to repeat, no checkpoint, and its result is a step result like any other, so replay hands back
// the page as it was fetched, never as it is now. Only http(s); the proxy the environment names is
// used as curl would (model/proxy.ts); redirects are followed here, one hop at a time, each hop's
// scheme checked again and a hop to a domain not yet approved for this call judged again by the
// rules and the person (ToolContext.judge), at most MAX_REDIRECTS of them. At most MAX_FETCH_BYTES
// are read: the body is streamed and the read stops there.
import { isSavepointError } from '../errors/index.js';
import { formatBytes } from '../format/numbers.js';
import { proxiedFetch } from '../model/proxy.js';
import { defineTool, toolError, toolOk } from './define-tool.js';
import { asText } from './truncate.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

/** The most of a page's body web_fetch reads, whatever max_bytes asks. */
export const MAX_FETCH_BYTES = 10 * 1024 * 1024;

/** How many redirects one web_fetch follows before it stops and says so. */
export const MAX_REDIRECTS = 10;

/** How long one web_fetch waits for a page in all, redirects included. */
export const FETCH_TIMEOUT_MS = 60_000;

/** The input of a web_fetch call. */
export interface WebFetchInput {
  url: string;
  max_bytes?: number;
}

/** What web_fetch is given besides its input: tests and the library may pass their own fetch. */
export interface WebFetchOptions {
  /** The fetch to use when the environment names no proxy for an address (default: Node's own). */
  fetch?: typeof globalThis.fetch;
  /** The environment whose proxy variables are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

const description = `Fetches a web page (http or https) and returns it as text: HTML converted to markdown, other text (JSON, plain text, XML) as it is. Binary content (images, archives, PDFs) is refused.
- The result starts with the HTTP status and the final URL (after redirects), then the page.
- Reads at most ${formatBytes(MAX_FETCH_BYTES)} of the page; max_bytes asks for less. A long page is shown as its head and tail, like any long output.
- Each domain is approved by the user (or by their rules) before it is fetched; a redirect to another domain is approved again.
- The fetch is recorded: a resumed run gets the page as it was fetched then.`;

/** The web_fetch tool. */
export function createWebFetchTool(options: WebFetchOptions = {}): Tool<WebFetchInput> {
  return defineTool<WebFetchInput>({
    name: 'web_fetch',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The address to fetch: http:// or https:// only.' },
        max_bytes: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_FETCH_BYTES,
          description: `The most of the page's body to read, in bytes (default and most: ${MAX_FETCH_BYTES}).`,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    describe: (input) => `web_fetch ${asText(input.url)}`,
    // A read of the web: a person approves each domain, as a command is approved (rules may allow it).
    needsApproval: () => true,
    maxConcurrent: 8,
    run: (input, context) => fetchPage(input, context, options),
  });
}

// Follows the address hop by hop, then reads the last answer's body.
async function fetchPage(input: WebFetchInput, context: ToolContext, options: WebFetchOptions): Promise<ToolResult> {
  const maxBytes = Math.min(input.max_bytes ?? MAX_FETCH_BYTES, MAX_FETCH_BYTES);
  let url = webAddress(input.url);
  if (typeof url === 'string') return toolError(url, 'error: not an http(s) URL');
  // The domains this call may reach: the first was judged before the call ran.
  const approved = new Set([url.hostname.toLowerCase()]);
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const signal = context.signal ? AbortSignal.any([context.signal, timeout]) : timeout;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await request(url, signal, options);
    } catch (error) {
      return toolError(`Could not fetch ${url.href}: ${fetchFailure(error, signal)}`, `error: ${fetchFailure(error, signal)}`);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS)
        return toolError(
          `${url.href} redirected more than ${MAX_REDIRECTS} times; the last redirect went to ${location}. Not followed further.`,
          'error: too many redirects',
        );
      const next = webAddress(location, url);
      if (typeof next === 'string')
        return toolError(`${url.href} redirected to ${location}, which web_fetch does not follow: ${next}`, 'error: redirect refused');
      const domain = next.hostname.toLowerCase();
      if (!approved.has(domain)) {
        const refused = await judgeHop(context, next.href, domain);
        if (refused)
          return {
            ...refused,
            output: `${url.href} redirected to ${next.href} (another domain, ${domain}), which was not followed:\n${refused.output}`,
            summary: `redirect to ${domain} not followed`,
          };
        approved.add(domain);
      }
      url = next;
      continue;
    }
    return readPage(response, url, maxBytes);
  }
}

// The rules' and the person's word on a hop to a domain not approved for this call: undefined goes
// on. With no terminal to ask on, the hop is not followed and the model is told which rule would
// allow it (the call itself was allowed: the run goes on).
async function judgeHop(context: ToolContext, url: string, domain: string): Promise<ToolResult | undefined> {
  try {
    return await context.judge?.({ url });
  } catch (error) {
    if (!isSavepointError(error) || error.code !== 'EAPPROVAL') throw error;
    return toolError(
      `A fetch from ${domain} needs approval, and there is no terminal to ask on; a rule web_fetch(domain:${domain}) in the settings allows it.`,
      'needs approval',
    );
  }
}

// Why a request failed, in words: fetch's own "fetch failed" hides the reason in its cause.
function fetchFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted)
    return signal.reason instanceof Error && signal.reason.name === 'TimeoutError'
      ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s`
      : 'stopped';
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

// The address as a URL, or why web_fetch refuses it (not an address, not http or https).
function webAddress(text: string, base?: URL): URL | string {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return `"${text}" is not a URL: web_fetch takes a full http:// or https:// address.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${url.protocol}// addresses are not fetched: web_fetch reads http:// and https:// only (use read_file for the repository's files).`;
  if (url.username || url.password) return 'an address with a user name or password in it is not fetched.';
  return url;
}

// One hop, redirects left to the caller; through the proxy the environment names for its scheme.
async function request(url: URL, signal: AbortSignal, options: WebFetchOptions): Promise<Response> {
  const proxied = await proxiedFetch(url.href, options.env ?? process.env);
  const init = {
    redirect: 'manual',
    signal,
    headers: { accept: 'text/html, text/markdown, text/plain, application/json, */*;q=0.5', 'user-agent': 'savepoint web_fetch' },
  } as RequestInit;
  if (proxied) return proxied.fetch(url, { ...init, dispatcher: proxied.dispatcher } as RequestInit);
  return (options.fetch ?? globalThis.fetch)(url, init);
}

// The body, at most `maxBytes` of it, as the model's text with the status and final URL above it.
async function readPage(response: Response, url: URL, maxBytes: number): Promise<ToolResult> {
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const mediaType = type.split(';')[0]!.trim();
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  if (mediaType && !isTextType(mediaType)) {
    await response.body?.cancel().catch(() => {});
    return toolError(
      `${url.href} answered ${status} with ${mediaType}, which is not text: web_fetch returns text pages only (HTML, plain text, JSON, XML).`,
      `error: ${mediaType} is not text`,
    );
  }
  const { bytes, cut } = await readAtMost(response, maxBytes);
  // With no type given, bytes decide: a NUL is how git and grep tell binary from text too.
  if (!mediaType && bytes.includes(0))
    return toolError(
      `${url.href} answered ${status} with binary content (no content type): web_fetch returns text pages only.`,
      'error: binary content',
    );
  const text = decode(bytes, type);
  const html =
    mediaType === 'text/html' || mediaType === 'application/xhtml+xml' || (!mediaType && /^\s*<(!doctype html|html)/i.test(text));
  const body = html ? await htmlToMarkdown(text) : text;
  const head = [
    `URL: ${url.href}`,
    `Status: ${status}`,
    ...(mediaType ? [`Content-Type: ${mediaType}${html ? ' (converted to markdown)' : ''}`] : []),
  ];
  const note = cut ? `\n\n[the read stopped at ${formatBytes(maxBytes)}: the page goes on]` : '';
  const output = `${head.join('\n')}\n\n${body}${note}`;
  const summary = `${response.status}, ${formatBytes(bytes.length)}${cut ? ' (cut)' : ''}${html ? ' as markdown' : ''}`;
  return response.status >= 400 ? { output, isError: true, summary } : toolOk(output, summary);
}

// Text types: text/*, and the application types that are text (JSON, XML, JavaScript, and +json / +xml).
function isTextType(mediaType: string): boolean {
  return (
    mediaType.startsWith('text/') ||
    /^application\/([\w.-]+\+)?(json|xml)$/.test(mediaType) ||
    [
      'application/javascript',
      'application/ecmascript',
      'application/x-javascript',
      'application/x-sh',
      'application/toml',
      'application/yaml',
      'application/x-yaml',
      'application/graphql',
    ].includes(mediaType)
  );
}

// The body streamed until its end or `maxBytes`, whichever comes first; the rest is never read.
async function readAtMost(response: Response, maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), cut: false };
  const reader = response.body.getReader();
  const parts: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(parts), cut: false };
    parts.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return { bytes: Buffer.concat(parts).subarray(0, maxBytes), cut: true };
    }
  }
}

// The bytes as text in the charset the content type names (UTF-8 when it names none, or one Node does not know).
function decode(bytes: Buffer, contentType: string): string {
  const charset = /charset="?([\w-]+)"?/.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

// HTML as markdown, by turndown (loaded on the first page: start-up does not pay for it). Scripts,
// styles and the like are dropped: they are not what a page says.
async function htmlToMarkdown(html: string): Promise<string> {
  const loaded = await import('turndown');
  // turndown is CommonJS: its class may arrive as the module's default.
  const TurndownService = (loaded as unknown as { default: typeof loaded.default }).default ?? loaded;
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(['script', 'style', 'noscript', 'template', 'iframe', 'head'] as never);
  return service.turndown(html).trim();
}
