// The MCP servers of one process: each started (or, over HTTP, reached) the first time something
// needs it, kept for the rest of the run, and stopped at its end. A stdio server runs in the run's
// sandbox, like a command (tools/sandbox.ts: read-only but for the working tree and a private /tmp,
// .git and the files that decide what runs read-only, no network unless the run or the server's
// own `network` allows it), under the guard of stdio-guard.ts, so a kill -9 of savepoint leaves no
// server behind. The guard stays outside the sandbox and runs `bwrap … -- <server>`: it watches its
// parent's pid, which means nothing inside bubblewrap's pid namespace, and its kill of its process
// group reaches the server inside (a process group spans the namespace); bwrap's --die-with-parent
// takes the sandbox down with the guard besides. An HTTP server is remote: nothing to confine here.
// Its environment is its configuration's `env` on a few of the person's variables (PATH, HOME,
// USER, SHELL, TERM, LOGNAME, as the SDK passes them): no secret-named variable of the person's
// reaches it, sandboxed or not. Its stderr goes to
// `.git/savepoint/mcp/<server>.log`, never the terminal, and its last lines are kept for the
// message when it fails to start. The SDK is loaded only here, when a server is first needed, so a
// run that only replays never loads it.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { McpCallError, McpServerStartError } from '../../errors/index.js';
import { programOnPath, sandboxedProgram, type SandboxConfig } from '../sandbox.js';
import { describeServer, type McpServerConfig, type McpStdioServer } from './config.js';
import { GUARD_SCRIPT } from './stdio-guard.js';

/** How long a server may take to start and answer its handshake, when MCP_TIMEOUT (ms, as Claude Code reads it) does not say. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;

/** How long one tool call may take, when MCP_TOOL_TIMEOUT (ms) does not say. Progress notifications reset it. */
export const DEFAULT_CALL_TIMEOUT_MS = 600_000;

// The end of a server's stderr kept for a failure's message.
const STDERR_TAIL_BYTES = 2048;

// The SDK's error codes (ErrorCode in its types) for a request that timed out, and a connection that
// closed under one: written out, as importing the enum would load the SDK in every run, MCP or not.
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;

/** A tool a server offers, as it listed it. */
export type McpListedTool = McpToolInfo;

/** How stdio servers run: the run's sandbox (or none, by the person's choice) and what it protects. */
export interface McpSandbox {
  config: SandboxConfig;
  /** The working tree: the one place (with a private /tmp) a sandboxed server may write. */
  root: string;
  /** The repository's git directories, kept read-only (default: found from `root`, see gitPaths). */
  gitDirs?: string[];
}

/** What McpConnections needs besides the servers. */
export interface McpConnectionOptions {
  /**
   * How stdio servers run, asked (and awaited) before each one starts: a run hands in its sandbox
   * choice, which may still be being made (the probe, a question). No default: a caller that forgot
   * it must not start servers unconfined by accident.
   */
  sandbox: () => McpSandbox | Promise<McpSandbox>;
  /** Where each server's stderr log goes (`<dir>/<server>.log`). Default: nowhere (discarded). */
  logDir?: string;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
  /** Told each time a server is started or reached (for tests and `mcp list`). */
  onStart?: (server: string) => void;
}

interface Connection {
  client: Client;
  /** The end of what the server wrote to stderr so far (stdio servers), for a failed call's message. */
  tail(): string;
  /** The stdio guard's pid: SIGTERM to it takes the server's whole process group down at once. */
  pid?: number;
  tools?: Promise<McpListedTool[]>;
}

/** The MCP servers a process uses, started lazily and closed together. */
export class McpConnections {
  private readonly open = new Map<string, Promise<Connection>>();
  private readonly logs: WriteStream[] = [];
  private closed = false;

  constructor(
    readonly servers: ReadonlyMap<string, McpServerConfig>,
    private readonly options: McpConnectionOptions,
  ) {}

  /** The connection to `server`, started on first use; a failure to start is remembered for this process. */
  connect(server: string): Promise<Connection> {
    let connection = this.open.get(server);
    if (!connection) {
      connection = this.start(server);
      this.open.set(server, connection);
    }
    return connection;
  }

  /** Every tool `server` offers now (every page of its list), asked once per process. */
  async listTools(server: string): Promise<McpListedTool[]> {
    const connection = await this.connect(server);
    connection.tools ??= (async () => {
      const tools: McpListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await connection.client.listTools(cursor ? { cursor } : undefined, { timeout: this.startTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 10_000);
      return tools;
    })();
    return connection.tools;
  }

  /**
   * Calls `tool` on `server` with `args`; aborting `signal` cancels the request. A call the server
   * did not answer in time, or that its exit cut short, throws an McpCallError saying so.
   */
  async callTool(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const connection = await this.connect(server);
    const timeout = this.options.callTimeoutMs ?? envMs('MCP_TOOL_TIMEOUT') ?? DEFAULT_CALL_TIMEOUT_MS;
    try {
      return (await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout,
        resetTimeoutOnProgress: true,
      })) as CallToolResult;
    } catch (error) {
      if (signal?.aborted) throw error;
      const code = (error as { code?: unknown })?.code;
      if (code === REQUEST_TIMEOUT) throw new McpCallError(server, tool, 'timeout', timeout, '');
      if (code === CONNECTION_CLOSED) {
        await new Promise((resolve) => setTimeout(resolve, 50)); // the last of its stderr may still be in the pipe
        throw new McpCallError(server, tool, 'closed', timeout, connection.tail());
      }
      throw error;
    }
  }

  /** Where `server`'s stderr is logged: a stdio server's file under `logDir`; none for an HTTP server (its stderr is its host's). */
  logFile(server: string): string | undefined {
    return this.options.logDir && this.servers.get(server)?.type === 'stdio' ? join(this.options.logDir, `${server}.log`) : undefined;
  }

  /** Stops every server this process started (stdio servers get SIGTERM, then SIGKILL, from the SDK). */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.open.values()];
    this.open.clear();
    // The guard first: the SDK's own close waits up to 2 s for a server to exit once its stdin closes.
    const stop = (c: Connection) => {
      try {
        if (c.pid) process.kill(c.pid, 'SIGTERM');
      } catch {
        // gone already
      }
      return c.client.close();
    };
    await Promise.all(open.map((connection) => connection.then(stop, () => undefined).catch(() => undefined)));
    for (const log of this.logs) log.end();
  }

  private get startTimeoutMs(): number {
    return this.options.startTimeoutMs ?? envMs('MCP_TIMEOUT') ?? DEFAULT_START_TIMEOUT_MS;
  }

  private async start(name: string): Promise<Connection> {
    const server = this.servers.get(name);
    if (!server) throw new Error(`no MCP server named "${name}" is configured (in .mcp.json or settings)`);
    if (this.closed) throw new Error('the run has ended');
    const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const command = describeServer(server);
    // Decided before anything starts: a refusal (no sandbox, none waived) starts nothing.
    const launch = server.type === 'stdio' ? await this.launch(server) : undefined;
    if (this.closed) throw new Error('the run has ended');
    let tail = '';
    const keepTail = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    };
    const transport =
      server.type === 'stdio'
        ? new StdioClientTransport({
            command: process.execPath,
            args: ['-e', GUARD_SCRIPT, launch!.file, ...launch!.args],
            env: server.env,
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
    if (transport instanceof StdioClientTransport) {
      const stderr = transport.stderr as PassThrough | null;
      const log = this.openLog(name);
      stderr?.on('data', (chunk: Buffer) => {
        keepTail(chunk);
        log?.write(chunk);
      });
    }
    const client = new Client({ name: 'savepoint', version: '0.1.0' }, { capabilities: {} });
    this.options.onStart?.(name);
    const timeoutMs = this.startTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    // A line of its stdout that is not MCP's JSON-RPC (a banner, garbage) is told to the client, which reads on.
    let notMcp: string | undefined;
    client.onerror = (error) => {
      if (error instanceof SyntaxError || /JSON|parse|invalid/i.test(error.message)) notMcp ??= error.message.slice(0, 300);
    };
    try {
      await Promise.race([
        client.connect(transport, { timeout: timeoutMs }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`it did not answer the MCP handshake within ${timeoutMs / 1000} s (MCP_TIMEOUT sets the limit in ms)`)),
            timeoutMs,
          );
        }),
      ]);
    } catch (error) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      // The last of its stderr may still be on its way through the pipe.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const garbage = notMcp ? `; what it wrote to stdout is not MCP's JSON-RPC (${notMcp})` : '';
      throw new McpServerStartError(name, command, `${startFailure(error)}${garbage}`, tail);
    } finally {
      clearTimeout(timer);
    }
    // A server that exits later (it crashed, it was killed) is started anew by the next call that needs it.
    const started = this.open.get(name);
    client.onclose = () => {
      if (this.open.get(name) === started) this.open.delete(name);
    };
    return { client, tail: () => tail, ...(transport instanceof StdioClientTransport && transport.pid ? { pid: transport.pid } : {}) };
  }

  // What the guard runs for `server`: its command in the sandbox (bwrap's command line), or as it is.
  private async launch(server: McpStdioServer): Promise<{ file: string; args: string[] }> {
    const sandbox = await this.options.sandbox();
    // A command that is nowhere on its PATH is said as unconfined (spawn's ENOENT), not as bwrap's
    // execvp failure from inside: the file system there is this one, read-only, so it is as missing.
    if (sandbox.config.kind === 'bwrap' && !programOnPath(server.command, server.env.PATH ?? process.env.PATH)) {
      throw new McpServerStartError(
        server.name,
        describeServer(server),
        `could not start ${server.command}: spawn ${server.command} ENOENT (it is on no directory of PATH)`,
        '',
      );
    }
    const config: SandboxConfig =
      sandbox.config.kind === 'bwrap' ? { ...sandbox.config, network: Boolean(sandbox.config.network || server.network) } : sandbox.config;
    return sandboxedProgram(sandbox.root, server.command, server.args, config, {
      ...(sandbox.gitDirs ? { gitDirs: sandbox.gitDirs } : {}),
      cwd: process.cwd(),
    });
  }

  private openLog(server: string): WriteStream | undefined {
    if (!this.options.logDir) return undefined;
    try {
      mkdirSync(this.options.logDir, { recursive: true });
      const log = createWriteStream(join(this.options.logDir, `${server}.log`), { flags: 'a' });
      log.on('error', () => undefined); // a log that cannot be written never fails a call
      log.write(`--- ${new Date().toISOString()} started by savepoint (pid ${process.pid})\n`);
      this.logs.push(log);
      return log;
    } catch {
      return undefined;
    }
  }
}

/** Where stdio servers' stderr logs go in a repository whose git common directory is `commonDir`. */
export function mcpLogDir(commonDir: string): string {
  return join(commonDir, 'savepoint', 'mcp');
}

function startFailure(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  if (/Connection closed/i.test(message)) return 'it exited (or closed its output) before answering the MCP handshake';
  // fetch's "fetch failed" says why only in its cause (connect ECONNREFUSED, getaddrinfo ENOTFOUND).
  const cause = (error as { cause?: { message?: unknown } })?.cause?.message;
  return `${message.replace(/^MCP error -?\d+: /, '')}${typeof cause === 'string' && cause && !message.includes(cause) ? ` (${cause})` : ''}`;
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
