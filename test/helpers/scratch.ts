// Throwaway things a test file makes (git repositories, fake Anthropic servers, temp directories),
// each cleaned up by one `after` hook, so a file does not repeat its own cleanup list and hook.
//
//   const scratch = useScratch();                  // at module level: one hook for the whole file
//   const repo = await scratch.repo({ 'a.txt': 'a\n' });
//   const fake = await scratch.fake(TURNS, hold);  // hold: turns answered only after a long delay
//   const dir = scratch.dir('savepoint-hold-');
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { ScriptTurn } from '../../src/model/script-file.js';
import { heldTurns } from './cli.js';
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions } from './fake-anthropic.js';
import { createTempRepo, type TempRepo } from './temp-repo.js';

// What useScratch hands out; everything it makes is removed when the enclosing suite ends.
export interface Scratch {
  // Runs `cleanup` after the suite, newest first (so a server closes before the repo it served goes).
  defer(cleanup: () => unknown): void;
  // A temp git repository holding `files`, committed unless `commit: false`.
  repo(files?: Record<string, string>, options?: { commit?: boolean }): Promise<TempRepo>;
  // A fake Anthropic server answering `turns`; with `hold`, the turn indexes in it are held back
  // (see heldTurns) until the test clears them, so a test can kill the CLI mid-call.
  fake(turns: NonNullable<FakeAnthropicOptions['turns']>, hold?: Set<number>, options?: Omit<FakeAnthropicOptions, 'turns'>): Promise<FakeAnthropic>;
  // An empty directory outside every repository (realpath, so it compares equal to what tools report).
  dir(prefix?: string): string;
}

// Registers the `after` hook in the calling scope (call it once, at module level or in a describe).
export function useScratch(): Scratch {
  const cleanups: Array<() => unknown> = [];
  // Every cleanup runs, even after one fails: a server left open would keep the file's process
  // alive, and the test runner waits for it forever. The first failure is the hook's.
  after(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length) throw failures[0];
  });
  const defer = (cleanup: () => unknown) => void cleanups.push(cleanup);
  return {
    defer,
    async repo(files = { 'README.md': '# project\n' }, { commit = true } = {}) {
      const repo = await createTempRepo({ files, commit });
      defer(() => repo.remove());
      return repo;
    },
    async fake(turns, hold, options = {}) {
      if (hold && !Array.isArray(turns)) throw new Error('scratch.fake: hold needs a list of turns');
      const fake = await startFakeAnthropic({ ...options, turns: hold ? heldTurns(turns as ScriptTurn[], hold) : turns });
      defer(() => fake.close());
      return fake;
    },
    dir(prefix = 'savepoint-scratch-') {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
      defer(() => removeDir(dir));
      return dir;
    },
  };
}

// Removes `dir` whole. A process that ends late may add a file meanwhile (a closed terminal's shell
// writes its program's exit code once the program has ended): Node's own retries only retry the
// last rmdir, never reading the folder again, so the whole removal is tried again.
function removeDir(dir: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      return rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt === 5) throw error;
    }
  }
}
