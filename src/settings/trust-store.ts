// The person's trust, remembered in their config folder ($XDG_CONFIG_HOME/savepoint/trust.json):
// for each repository root (its real path), the digest of the files that decide what runs as they
// were when the person trusted it, and each MCP server of the repository's they approved, by the
// digest of its configuration. The file is the person's, never a repository's: a repository cannot
// trust itself. It is written whole (temp file, rename), so a crash leaves the old or the new one.
// Tested in test/settings/trust.test.ts.
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { SettingsFileError } from '../errors/index.js';
import { writeFileDurably } from '../os/durable-file.js';
import { userConfigDir } from './config-dir.js';

/** What the store remembers about one repository root. */
export interface FolderRecord {
  /** The digest of its files (repository-files.ts) when the person trusted it; none: not trusted. */
  digest?: string;
  trustedAt?: string;
  /** Its MCP servers the person approved: the digest of each one's configuration. */
  servers?: Record<string, { digest: string; approvedAt: string }>;
}

/** The whole store. */
export interface TrustRecords {
  version: 1;
  folders: Record<string, FolderRecord>;
}

/** Where the store is: trust.json in the user's config folder. */
export function trustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(userConfigDir(env), 'trust.json');
}

/** The key of a repository root in the store: its real path (a symbolic link to it is the same folder). */
export function folderKey(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** The store as it is (empty when there is none). A file that cannot be used is named, as a settings file is. */
export function readTrust(env: NodeJS.ProcessEnv = process.env): TrustRecords {
  const file = trustFile(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return { version: 1, folders: {} };
    throw new SettingsFileError(file, `cannot be read (${(error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SettingsFileError(file, `is not valid JSON (${(error as Error).message}); it holds the folders you trusted`);
  }
  const folders = (parsed as { folders?: unknown })?.folders;
  if (typeof folders !== 'object' || folders === null || Array.isArray(folders))
    throw new SettingsFileError(file, 'must hold {"version": 1, "folders": {...}}', 'folders');
  const checked: Record<string, FolderRecord> = {};
  for (const [path, record] of Object.entries(folders as Record<string, unknown>)) checked[path] = checkRecord(record);
  return { version: 1, folders: checked };
}

/** The record of the repository at `root` (an empty one when the store has none). */
export function folderRecord(root: string, env: NodeJS.ProcessEnv = process.env): FolderRecord {
  return readTrust(env).folders[folderKey(root)] ?? {};
}

/** Changes the record of the repository at `root` with `change`, and writes the store whole. */
export function updateFolderRecord(
  root: string,
  change: (record: FolderRecord) => FolderRecord,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const records = readTrust(env);
  const key = folderKey(root);
  records.folders[key] = change({ ...(records.folders[key] ?? {}) });
  const file = trustFile(env);
  mkdirSync(userConfigDir(env), { recursive: true });
  writeFileDurably(file, `${JSON.stringify(records, null, 2)}\n`, { mode: 0o600 });
}

/** Records that the person trusts the repository at `root` with its files as they are now (`digest`). */
export function recordTrust(root: string, digest: string, env: NodeJS.ProcessEnv = process.env): void {
  updateFolderRecord(root, (record) => ({ ...record, digest, trustedAt: new Date().toISOString() }), env);
}

/** Records that the person approved these MCP servers of the repository at `root` (name -> configuration digest). */
export function recordServerApprovals(root: string, servers: Record<string, string>, env: NodeJS.ProcessEnv = process.env): void {
  const approvedAt = new Date().toISOString();
  updateFolderRecord(
    root,
    (record) => ({
      ...record,
      servers: {
        ...(record.servers ?? {}),
        ...Object.fromEntries(Object.entries(servers).map(([name, digest]) => [name, { digest, approvedAt }])),
      },
    }),
    env,
  );
}

// One folder's record as read back: anything of the wrong shape is dropped (it then trusts nothing).
function checkRecord(value: unknown): FolderRecord {
  if (typeof value !== 'object' || value === null) return {};
  const record = value as Record<string, unknown>;
  const out: FolderRecord = {};
  if (typeof record.digest === 'string') out.digest = record.digest;
  if (typeof record.trustedAt === 'string') out.trustedAt = record.trustedAt;
  if (typeof record.servers === 'object' && record.servers !== null) {
    const servers: NonNullable<FolderRecord['servers']> = {};
    for (const [name, server] of Object.entries(record.servers as Record<string, unknown>)) {
      const digest = (server as { digest?: unknown })?.digest;
      if (typeof digest === 'string') servers[name] = { digest, approvedAt: String((server as { approvedAt?: unknown }).approvedAt ?? '') };
    }
    out.servers = servers;
  }
  return out;
}
