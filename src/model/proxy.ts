// Proxies as curl honours them: an https:// address goes through https_proxy (or HTTPS_PROXY), an
// http:// one through http_proxy (or HTTP_PROXY), and NO_PROXY (or no_proxy) names hosts reached
// directly. Like curl, a proxy named for one scheme is not used for the other: with only
// HTTP_PROXY set, https://api.anthropic.com is reached directly. Node's own fetch ignores all of
// them, so behind a company proxy the model could not be reached at all; undici's
// EnvHttpProxyAgent reads NO_PROXY the way curl does and is handed to the SDK's fetch as its
// dispatcher. With no proxy for the model's scheme nothing is loaded and the SDK's fetch is used as it is.
import type { ClientOptions } from '@anthropic-ai/sdk';

// The variables for each scheme, in curl's order (the lower-case one first).
const PROXY_VARIABLES: Record<string, [string, string]> = {
  'https:': ['https_proxy', 'HTTPS_PROXY'],
  'http:': ['http_proxy', 'HTTP_PROXY'],
};

// The SDK's own default address, used when neither the options nor ANTHROPIC_BASE_URL give one.
const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/**
 * The proxy the environment names for `url`'s scheme (https_proxy / HTTPS_PROXY for https://,
 * http_proxy / HTTP_PROXY for http://), or undefined. NO_PROXY is the dispatcher's to apply, host by host.
 */
export function proxyFor(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return undefined; // not an address: the SDK says so when it is used
  }
  for (const name of PROXY_VARIABLES[protocol] ?? []) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** The address the SDK will call: `baseURL` when given, else ANTHROPIC_BASE_URL, else its default (as the SDK reads them). */
export function modelAddress(baseURL: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return baseURL ?? (env.ANTHROPIC_BASE_URL?.trim() || DEFAULT_BASE_URL);
}

/**
 * The client options that send the SDK's requests to `address` through the proxy the environment
 * names for its scheme, or none. undici's own fetch goes with its dispatcher: Node 20's built-in
 * fetch bundles an older undici whose dispatchers are not interchangeable with this one's.
 */
export async function proxyClientOptions(
  address: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Pick<ClientOptions, 'fetch' | 'fetchOptions'>> {
  const proxied = await proxiedFetch(address, env);
  if (!proxied) return {};
  return {
    fetch: proxied.fetch as unknown as ClientOptions['fetch'],
    fetchOptions: { dispatcher: proxied.dispatcher } as ClientOptions['fetchOptions'],
  };
}

/** undici's fetch with the dispatcher that reaches an address through a proxy (see proxiedFetch). */
export interface ProxiedFetch {
  fetch: typeof globalThis.fetch;
  /** Given as `dispatcher` in the fetch's options. */
  dispatcher: unknown;
}

/**
 * undici's fetch and the dispatcher that sends requests to `address` through the proxy the
 * environment names for its scheme (NO_PROXY honoured host by host), or undefined when it names
 * none: then nothing is loaded and Node's own fetch serves. web_fetch asks it for each hop.
 */
export async function proxiedFetch(address: string, env: NodeJS.ProcessEnv = process.env): Promise<ProxiedFetch | undefined> {
  const proxy = proxyFor(address, env);
  if (!proxy) return undefined;
  const loaded = await import('undici');
  // undici is CommonJS: bundled, its exports may arrive as the module's default.
  const { EnvHttpProxyAgent, fetch } =
    typeof loaded.EnvHttpProxyAgent === 'function' ? loaded : (loaded as unknown as { default: typeof loaded }).default;
  // The proxy is given for both schemes: the client calls one address, and undici would otherwise
  // read the other scheme's variable itself (and send https:// through HTTP_PROXY, which curl does not).
  // NO_PROXY is read as given, upper- or lower-case. As curl does, an http:// address is asked of an
  // http:// proxy directly (an absolute-URI request), an https:// one through a CONNECT tunnel;
  // undici would tunnel both by default.
  const noProxy = env.no_proxy ?? env.NO_PROXY ?? '';
  const dispatcher = new EnvHttpProxyAgent({ httpProxy: proxy, httpsProxy: proxy, noProxy, proxyTunnel: false } as ConstructorParameters<
    typeof EnvHttpProxyAgent
  >[0]);
  return { fetch: fetch as unknown as typeof globalThis.fetch, dispatcher };
}
