// A node built-in function replaced for the length of one test's call, so that a test can count or
// bend what src/ does through it (reads, writes, spawns). src/ imports the built-ins by name, so the
// replacement is pushed to those ESM bindings too (syncBuiltinESMExports), and the original is put
// back when `fn` ends, also when it throws.
import { syncBuiltinESMExports } from 'node:module';

/** Runs `fn` with `module[name]` replaced by `wrap(original)`; the original is back when `fn` returns or throws. */
export function withBuiltin<M extends object, K extends keyof M, T>(module: M, name: K, wrap: (original: M[K]) => M[K], fn: () => T): T {
  const original = module[name];
  module[name] = wrap(original);
  syncBuiltinESMExports();
  try {
    return fn();
  } finally {
    module[name] = original;
    syncBuiltinESMExports();
  }
}
