// Proxies as curl honours them: HTTPS_PROXY for https:// addresses, HTTP_PROXY for http:// ones
// (and their lower-case forms), NO_PROXY for hosts that are reached directly. Node's own fetch
// ignores all of them, so behind a company proxy the model could not be reached at all; undici's
// EnvHttpProxyAgent reads them the way curl does and is handed to the SDK's fetch as its dispatcher.
// With no proxy variable set nothing is loaded and the SDK's default fetch is used as it is.
import type { ClientOptions } from '@anthropic-ai/sdk';

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** True when the environment names a proxy for HTTP or HTTPS. */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return PROXY_VARIABLES.some((name) => Boolean(env[name]?.trim()));
}

/**
 * The client options that send the SDK's requests through the proxy the environment names, or none.
 * undici's own fetch goes with its dispatcher: Node 20's built-in fetch bundles an older undici
 * whose dispatchers are not interchangeable with this one's.
 */
export async function proxyClientOptions(env: NodeJS.ProcessEnv = process.env): Promise<Pick<ClientOptions, 'fetch' | 'fetchOptions'>> {
  if (!proxyConfigured(env)) return {};
  const loaded = await import('undici');
  // undici is CommonJS: bundled, its exports may arrive as the module's default.
  const { EnvHttpProxyAgent, fetch } = typeof loaded.EnvHttpProxyAgent === 'function' ? loaded : (loaded as unknown as { default: typeof loaded }).default;
  // As curl does: an http:// address is asked of an http:// proxy directly (an absolute-URI
  // request), an https:// one through a CONNECT tunnel; undici would tunnel both by default.
  const dispatcher = new EnvHttpProxyAgent({ proxyTunnel: false } as ConstructorParameters<typeof EnvHttpProxyAgent>[0]);
  return { fetch: fetch as unknown as ClientOptions['fetch'], fetchOptions: { dispatcher } as ClientOptions['fetchOptions'] };
}
