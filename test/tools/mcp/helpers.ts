// What the MCP tests share: the counting server's path, a `.mcp.json` that starts it, and reading
// its counts (each start and each call is a line in a file of its own, see fixtures/counting-server.mjs).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tests' own MCP server. */
export const COUNTING_SERVER = fileURLToPath(new URL('./fixtures/counting-server.mjs', import.meta.url));

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
export async function waitForExit(pids: number[], timeoutMs = 5000): Promise<number[]> {
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
 * the guard processes that savepoint started it under), or `timeoutMs` passes; returns those left.
 */
export async function waitForNoProcessOf(countDir: string, timeoutMs = 5000): Promise<number[]> {
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
