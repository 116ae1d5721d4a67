// What a command that failed at a sandbox boundary is told: a note appended to its result when its
// output shows a write refused as a read-only file system (under .git, to a file that decides what
// runs, under $HOME, or elsewhere outside the working tree and /tmp), a removal or rename of one of
// those mount points refused as busy, or a network failure (a name that does not resolve, an unreachable
// network, a refused connection to another machine). Pure code over the recorded output: the note
// is part of the result written before the step is recorded, so a replay hands back the same words.
// Only in the sandbox, and only for what it really refuses (never .git when git writes are allowed,
// never the network when it is allowed): an unconfined command is never told a guess.
import { isAbsolute, relative, resolve } from 'node:path';
import { isControlPath } from './control-files.js';

/** The boundaries of the sandbox a command ran in, and where it ran. */
export interface SandboxBoundaries {
  /** The working tree (the command's directory): writable. */
  root: string;
  /** The repository's git directories (read-only unless `gitWrites`). */
  gitDirs: string[];
  /** $HOME outside the sandbox, the same path inside it (read-only). */
  home?: string;
  network: boolean;
  gitWrites: boolean;
  /** Files that decide what runs the command created at the root (absent before it, there after): no mount could stop them. */
  madeControlFiles?: string[];
}

/** The note for a command's output: `text` for the model (appended to the output), `short` for the step line. */
export interface SandboxNote {
  text: string;
  short: string;
}

type Boundary = 'network' | 'git' | 'control' | 'home' | 'outside';

const NOTES: Record<Boundary, { text: string; short: string }> = {
  network: {
    text: "note: this command ran in savepoint's sandbox, which has no network: downloads, installs, fetches and pushes fail in it. The person can run such a step themselves, or allow the network with --allow-network.",
    short: 'no network',
  },
  git: {
    text: "note: this command ran in savepoint's sandbox, where the repository's .git is read-only: git commit, git add and changes to branches or tags fail in it. The person can do that themselves, or allow it with --allow-git-writes.",
    short: '.git read-only',
  },
  control: {
    text: "note: this command ran in savepoint's sandbox, where the files that decide what runs (.savepoint/, .claude/, .mcp.json, every AGENTS.md and CLAUDE.md) are read-only, as .git is: a change to them is the person's to make, not a command's. Say what should change and why, and leave the change to the person.",
    short: 'control files read-only',
  },
  home: {
    text: "note: this command ran in savepoint's sandbox, where $HOME is read-only (only the working tree and a private /tmp are writable): caches, configuration and global installs there fail. Point them at the working tree or /tmp, or the person runs the step with --no-sandbox.",
    short: '$HOME read-only',
  },
  outside: {
    text: "note: this command ran in savepoint's sandbox, where only the working tree and a private /tmp are writable; everything else is read-only. The person can run such a step themselves, or with --no-sandbox.",
    short: 'read-only outside the tree',
  },
};

const READ_ONLY = /read-only file system|\bEROFS\b/i;
// A mount point cannot be removed or renamed: `rm AGENTS.md` in the sandbox says "busy", not "read-only".
const BUSY = /device or resource busy|\bEBUSY\b/i;
// Names that do not resolve and networks that cannot be reached: curl, git, wget, ssh, pip, node, npm.
const NO_NETWORK =
  /could not resolve (host|hostname|proxy)|temporary failure in name resolution|name or service not known|unable to resolve host|\bENOTFOUND\b|\bEAI_AGAIN\b|network is unreachable|\bENETUNREACH\b/i;
const REFUSED = /connection refused|\bECONNREFUSED\b/i;
// Paths on a line: quoted ('…', "…", `…'), or bare ones that are absolute or in .git, or name a
// file that decides what runs (`bash: .mcp.json: Read-only file system`).
// ‘ “ and ’ ” as escapes: a regular expression's characters reach the bundle as written, and its code stays ASCII (scripts/bundle.js).
const QUOTED = /['"`\u2018\u201c]([^\s'"`\u2019\u201d]+)['"\u2019\u201d]/g;
const BARE = /(?:^|[\s:=(])((?:\/|\.git\b)[^\s'"`:,;()]*)/g;
const BARE_RELATIVE = /(?:^|[\s:=(])([^\s'"`:,;()/][^\s'"`:,;()]*)/g;
// Addresses on a refused connection's line: `connect ECONNREFUSED 10.0.0.2:443`, `to github.com port 22`.
const ADDRESS = /\b(\d{1,3}(?:\.\d{1,3}){3})\b|\[([0-9a-f:]+)\]|\bto (?:host )?([A-Za-z0-9.-]+) port\b/gi;

/** The note for `output` of a command that ran in the sandbox `b`, or undefined when it hit no boundary. */
export function sandboxNote(output: string, b: SandboxBoundaries): SandboxNote | undefined {
  const boundary = boundaryNote(output, b);
  const made = b.madeControlFiles ?? [];
  if (made.length === 0) return boundary;
  const names = made.join(', ');
  const madeNote = {
    text: `note: this command created ${names}, which decides what savepoint runs or reads into a new run. The sandbox keeps such files read-only where they exist, but cannot stop a new one: tell the person what it is for; keeping it is their decision.`,
    short: `made ${names}`,
  };
  return boundary ? { text: `${boundary.text}\n${madeNote.text}`, short: `${boundary.short}; ${madeNote.short}` } : madeNote;
}

function boundaryNote(output: string, b: SandboxBoundaries): SandboxNote | undefined {
  // One pass over the whole output first: most commands hit no boundary, and an output may be huge.
  if (!READ_ONLY.test(output) && !BUSY.test(output) && (b.network || !(NO_NETWORK.test(output) || REFUSED.test(output)))) return undefined;
  const found = new Set<Boundary>();
  const lines = output.split('\n');
  if (!b.network && lines.some((line) => NO_NETWORK.test(line) || (REFUSED.test(line) && refusedElsewhere(line)))) found.add('network');
  if (lines.some((line) => READ_ONLY.test(line))) {
    const paths = lines.filter((line) => READ_ONLY.test(line)).flatMap(pathsOn);
    const where = paths.map((path) => boundaryOf(resolve(b.root, path), b));
    // A refused write the line names no path for is still outside what the sandbox lets a command write.
    if (where.length === 0) found.add('outside');
    for (const boundary of where) if (boundary) found.add(boundary);
  }
  // Busy is the sandbox's only for the mount points it made (the git directories, the control files);
  // anywhere else it is the command's own affair (a file in use, a mounted disk).
  for (const path of lines.filter((line) => BUSY.test(line)).flatMap(pathsOn)) {
    const boundary = boundaryOf(resolve(b.root, path), b);
    if (boundary === 'git' || boundary === 'control') found.add(boundary);
  }
  if (found.size === 0) return undefined;
  const order = ['network', 'git', 'control', 'home', 'outside'] as const;
  const notes = order.filter(
    (boundary) => found.has(boundary) && !(boundary === 'outside' && (found.has('git') || found.has('control') || found.has('home'))),
  );
  return {
    text: notes.map((boundary) => NOTES[boundary].text).join('\n'),
    short: `sandbox: ${notes.map((boundary) => NOTES[boundary].short).join(', ')}`,
  };
}

function pathsOn(line: string): string[] {
  const paths = [...line.matchAll(QUOTED)].map((m) => m[1]!);
  if (paths.length) return paths;
  // Bare: a shell's own path may lead the line (`/usr/bin/bash: line 1: .mcp.json: ...`).
  return [
    ...[...line.matchAll(BARE)].map((m) => m[1]!),
    ...[...line.matchAll(BARE_RELATIVE)].map((m) => m[1]!).filter((path) => isControlPath(path)),
  ];
}

// Which read-only boundary `path` lies behind; undefined where a command may write (the working
// tree but its control files, /tmp, or .git when git writes are allowed): a refusal there is not the sandbox's.
function boundaryOf(path: string, b: SandboxBoundaries): Boundary | undefined {
  if (b.gitDirs.some((dir) => within(path, dir))) return b.gitWrites ? undefined : 'git';
  if (within(path, b.root) && isControlPath(relative(b.root, path))) return 'control';
  if (within(path, b.root) || within(path, '/tmp')) return undefined;
  if (b.home && within(path, b.home)) return 'home';
  return 'outside';
}

function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

// A refused connection says "no network" only when it went to another machine: inside the
// sandbox, this machine's own loopback answers (and refuses) for itself.
function refusedElsewhere(line: string): boolean {
  const addresses = [...line.matchAll(ADDRESS)].map((m) => (m[1] ?? m[2] ?? m[3]!).toLowerCase());
  return addresses.some((address) => !/^(127\.|0\.0\.0\.0$|::1?$|localhost$|ip6-localhost$)/.test(address));
}
