// What the MCP tests share: the counting server's path, a `.mcp.json` that starts it, and reading
// its counts (each start and each call is a line in a file of its own, see fixtures/counting-server.mjs);
// a Streamable HTTP server in the test's own process.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledFixture } from '../../helpers/library.js';

/** The tests' own MCP server (its one-file bundle when scripts/run-tests.js made one). */
export const COUNTING_SERVER = bundledFixture(fileURLToPath(new URL('./fixtures/counting-server.mjs', import.meta.url)));

/** The `.mcp.json` entry that starts the counting server (with `mode`, one of its failure modes), counting into `countDir`. */
export function countingServer(countDir: string, mode?: string, env: Record<string, string> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [COUNTING_SERVER, ...(mode ? [mode] : [])], env: { COUNT_DIR: countDir, ...env } };
}

/** Writes `.mcp.json` with these servers at `root`. */
export function writeMcpJson(root: string, servers: Record<string, unknown>): void {
  writeFileSync(join(root, '.mcp.json'), JSON.stringify({ mcpServers: servers }, null, 2));
}

/** How many lines `what` (starts, <tool>.calls) has in `countDir`. */
export function counted(countDir: string, what: string): number {
  const file = join(countDir, what);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** The pids of every counting server started with `countDir`. */
export function serverPids(countDir: string): number[] {
  return readdirSync(countDir)
    .filter((name) => name.startsWith('pid-'))
    .map((name) => Number(name.slice(4)));
}

/** The pids among `pids` that are still running (and not zombies). */
export function stillRunning(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return !/^\d+ \(.*\) Z/.test(stat);
    } catch {
      return false;
    }
  });
}

/** Waits until none of `pids` runs, or `timeoutMs` passes; returns those still running. */
export async function waitForExit(pids: number[], timeoutMs = 30_000): Promise<number[]> {
  const until = Date.now() + timeoutMs;
  let running = stillRunning(pids);
  while (running.length && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = stillRunning(pids);
  }
  return running;
}

/**
 * Waits until no process runs with `COUNT_DIR=<countDir>` in its environment (the counting server and
 * the guard processes that savepoint started it under), or `timeoutMs` passes (generous: the machine
 * may be loaded; a pass returns as soon as they are gone); returns those left.
 */
export async function waitForNoProcessOf(countDir: string, timeoutMs = 60_000): Promise<number[]> {
  const mark = Buffer.from(`\0COUNT_DIR=${countDir}\0`);
  const find = () =>
    stillRunning(
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => {
          try {
            return Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]).includes(mark);
          } catch {
            return false; // gone, or not ours to read
          }
        }),
    );
  const until = Date.now() + timeoutMs;
  let running = find();
  while (running.length && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = find();
  }
  return running;
}

/** A Streamable HTTP MCP server in the test's process, and how many HTTP requests it has had. */
export interface HttpMcpServer {
  url: string;
  readonly requests: number;
  close(): Promise<void>;
}

/**
 * Starts a Streamable HTTP MCP server on this machine's loopback (stateless: a server per request),
 * whose one read-only tool, whoami, answers with the Authorization and X-Source headers its request carried.
 */
export async function startHttpServer(): Promise<HttpMcpServer> {
  // Loaded here, not at the top: most files that import these helpers never start an HTTP server,
  // and the SDK with zod is about 0.3 s of CPU to load.
  const [{ McpServer }, { StreamableHTTPServerTransport }, { z }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('zod'),
  ]);
  const state = { requests: 0 };
  const http = createServer(async (req: IncomingMessage, res) => {
    state.requests++;
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const server = new McpServer({ name: 'http-test', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says who the caller is.', inputSchema: { greeting: z.string() }, annotations: { readOnlyHint: true } }, async ({ greeting }) => ({
      content: [{ type: 'text', text: `${greeting}, ${String(req.headers.authorization)} from ${String(req.headers['x-source'])}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, get requests() { return state.requests; }, close: () => new Promise((resolve) => http.close(() => resolve())) };
}
