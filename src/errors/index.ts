// No behaviour of its own: re-exports only.
/**
 * Every error class savepoint raises on purpose, one per failure a user can meet, each with a
 * stable `code` that tests and scripts match on and a `data` payload (STYLE: isomorphic-git's
 * src/errors). The CLI prints the message as one paragraph; a stack trace only with SAVEPOINT_DEBUG=1.
 * This folder imports nothing else of savepoint's, so every other folder may use it.
 */
export { SavepointError, isSavepointError } from './savepoint-error.js';
export * from './journal.js';
export * from './replay.js';
export * from './run.js';
export * from './tools.js';
export * from './model.js';
export * from './worktree.js';
export * from './secrets.js';
export * from './disk-full.js';
export * from './settings.js';
export * from './mcp.js';
export * from './push.js';
