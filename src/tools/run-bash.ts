// run_bash: a shell command in the repository root. The command runs in a process group of its own,
// so a timeout, an abort, or the command's end takes down everything it started, not just bash. A
// process that left the group (setsid, a daemon) and keeps the output pipe open is not waited on:
// once bash has exited, what the pipe already holds is read, reading stops, and the result names
// the process (in the sandbox none can: its pid namespace dies with bash).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { StoppedBySignalError, stopSignalWords } from '../errors/index.js';
import { ellipsize, oneLine, showControls } from '../format/text.js';
import { defineTool, toolError, toolOk } from './define-tool.js';
import { asText, lastLine } from './truncate.js';
import { absentControlFiles, gitPaths, sandboxedCommand, type SandboxConfig } from './sandbox.js';
import { sandboxNote } from './sandbox-notes.js';
import { fitsSpare, SPARE_LOADER, SpareShells } from './spare-shell.js';
import { openPipeId, pipeHolders, type PipeHolder } from '../os/pipe-holders.js';
import { startProcess, type CommandLine } from '../os/processes.js';
import type { Tool, ToolResult } from './types.js';
import type { BackgroundCommands } from './background-commands.js';

/** How long a command may run when the model does not say. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;

// Past this much output the command is stopped: the journal keeps every byte of what it returns.
// It is counted as the journal's JSON will hold it, where a NUL or another control byte takes six
// characters (\u0000): 256 MB of NUL bytes would be 1.5 GB there, past what one string can hold, and
// the run crashed ("Invalid string length") before the result was recorded.
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

// How long after bash exits (and its group is killed) the output pipe may stay open before
// run_bash looks who holds it: killed processes close it within milliseconds, so only a process
// outside the group (or one the kernel is slow to tear down) is still there by then.
const SETTLE_MS = 100;
// How many looks that find nobody holding the still-open pipe run_bash takes before it stops
// reading without naming the holder.
const UNSEEN_LOOKS = 3;

/** How many characters `chunk` takes once decoded and escaped in a JSON string (at most six per byte). */
export function journalSize(chunk: Buffer): number {
  let size = chunk.length;
  for (let i = 0; i < chunk.length; i++) {
    const byte = chunk[i]!;
    if (byte < 0x20) size += byte === 0x0a || byte === 0x09 || byte === 0x0d || byte === 0x08 || byte === 0x0c ? 1 : 5;
    else if (byte === 0x22 || byte === 0x5c) size += 1;
  }
  return size;
}

/** The input of a run_bash call. */
export interface RunBashInput {
  command: string;
  timeout_ms?: number;
  /** Start the command and return at once with its id (`bg-<n>`); bash_output reads it, kill_bash stops it. */
  run_in_background?: boolean;
}

const description = `Runs a command with bash in the repository root and returns its exit code and its output (stdout and stderr together, in the order they were written).
- May run in a sandbox (the user decides): then only the working tree and a private /tmp are writable, .git is read-only, there may be no network, and variables named like secrets are unset. When a command fails for one of these reasons, say so instead of working around it.
- Stdin is empty, so a command that waits for input gets end-of-file instead of hanging. Each call starts a fresh shell: cd and variables do not carry over.
- Times out after ${DEFAULT_BASH_TIMEOUT_MS / 1000} s by default (set timeout_ms for longer builds or test runs). On timeout the command and every process it started are killed.
- Background processes (\`cmd &\`) are killed when the command ends. For a server or a watcher that must keep running, set run_in_background: the call returns at once with the command's id (bg-1, ...); read what it prints with bash_output and stop it with kill_bash (timeout_ms does not apply). It runs like any command (the same sandbox) and stops when the run ends; it is never started again on its own when the run is resumed.
- A process that leaves the command's process group (setsid, a daemon) is not waited for: once bash exits, the output already written is read, reading stops, and the result names the process (pid and command line), which goes on running. In the sandbox it is killed with the command.
- Prefer read_file, list_files, search, edit_file and write_file over cat, find, grep, sed and echo > file: they are checked and shown more clearly.
- Quote paths that contain spaces. Keep output small where you can (for example, \`| tail -50\`).`;

/**
 * The run_bash tool, running commands in `root`, unconfined unless `sandbox` says otherwise. A
 * function is asked at each call, so the tool can be made before the run has chosen its sandbox.
 * `gitDirs`, the repository's git directories the sandbox protects, are found once (gitPaths) when
 * not given: a run gives them from its repository. With `spares` (owned, and closed at its end, by
 * the caller: a run), each command's process is started while the one before runs (spare-shell.ts).
 */
export function createRunBashTool(
  root: string,
  sandbox: SandboxConfig | (() => SandboxConfig) = { kind: 'none' },
  gitDirs?: string[],
  spares?: SpareShells,
  background?: BackgroundCommands,
): Tool<RunBashInput> {
  let dirs = gitDirs;
  const protectedDirs = () => (dirs ??= gitPaths(root));
  return defineTool<RunBashInput>({
    name: 'run_bash',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The bash command to run.' },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          description: `Milliseconds before the command is killed (default ${DEFAULT_BASH_TIMEOUT_MS}).`,
        },
        run_in_background: {
          type: 'boolean',
          description:
            'Run the command in the background and return at once with its id; read it with bash_output, stop it with kill_bash.',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    describe: (input) => `run_bash "${oneLine(asText(input.command), 50)}"${input.run_in_background === true ? ' in the background' : ''}`,
    isRepeatSafe: () => false,
    needsApproval: () => true,
    mayChangeFiles: () => true,
    run: ({ command, timeout_ms: timeoutMs = DEFAULT_BASH_TIMEOUT_MS, run_in_background: inBackground }, { signal, onSpawn, onOutput }) =>
      inBackground
        ? startInBackground(root, typeof sandbox === 'function' ? sandbox() : sandbox, protectedDirs, background, command, signal)
        : runBash(
            root,
            typeof sandbox === 'function' ? sandbox() : sandbox,
            protectedDirs,
            spares,
            command,
            timeoutMs,
            signal,
            onSpawn,
            onOutput,
          ),
  });
}

// A command started in the background: the same command line as any (the same sandbox), its
// watchdog beside it (os/background-process.ts). Never on a spare shell: that is started ahead for
// the next foreground command, and bubblewrap's --die-with-parent must name this process.
async function startInBackground(
  root: string,
  sandbox: SandboxConfig,
  gitDirs: () => string[],
  background: BackgroundCommands | undefined,
  command: string,
  signal?: AbortSignal,
): Promise<ToolResult> {
  if (command.trim() === '') return toolError('The command is empty.');
  if (!background)
    return toolError(
      'Background commands are not available here: run the command without run_in_background.',
      'error: no background commands here',
    );
  if (signal?.aborted) return toolError('Aborted before the command started; it did not run.', 'aborted');
  const run = sandboxedCommand(root, `exec 2>&1; ${command}`, sandbox, process.env, sandbox.kind === 'bwrap' ? gitDirs() : []);
  return background.start(run, root, command);
}

async function runBash(
  root: string,
  sandbox: SandboxConfig,
  gitDirs: () => string[],
  spares: SpareShells | undefined,
  command: string,
  timeoutMs: number,
  signal?: AbortSignal,
  onSpawn?: (pid: number) => void,
  onOutput?: (chunk: string) => void,
): Promise<ToolResult> {
  if (command.trim() === '') return toolError('The command is empty.');
  if (signal?.aborted) return toolError('Aborted before the command started; it did not run.', 'aborted');
  // Two pipes would lose the order between stdout and stderr, so bash points its stderr at stdout
  // first; on the same line, so bash's error messages keep the user's line numbers.
  const script = `exec 2>&1; ${command}`;
  const run = sandboxedCommand(root, script, sandbox, process.env, sandbox.kind === 'bwrap' ? gitDirs() : []);
  // Control files the sandbox cannot cover (they do not exist): the result says if the command made one.
  const absent = sandbox.kind === 'bwrap' ? absentControlFiles(root) : [];
  // The spare's command line: the same, with the loader as bash's script (its last argument).
  const loader = { ...run, args: [...run.args.slice(0, -1), SPARE_LOADER] };
  // Without a spare ready, one is started now and handed the script at once: the command cannot
  // begin before its pipes are read below. A cold bash could: on a loaded machine a short command
  // (one starting a daemon) had already ended before this process got to read them, a zombie has
  // no descriptors, and the daemon holding the output could not be named. Cold (a script too long
  // for the loader) only when no spare fits.
  const spare = spares?.take(loader, root, script) ?? startedAhead(loader, root, script);
  // A process group of its own (setsid), so that kill(-pid) reaches every descendant (inside
  // bubblewrap too: its pid namespace dies with it). A spare was started the same way.
  const startedAt = Date.now();
  const handle = spare?.handle ?? startProcess(run.file, run.args, { cwd: root, env: run.env, group: true });
  const child = handle.child;
  try {
    if (child.pid) onSpawn?.(child.pid); // its group's id: recorded, so a crash cannot orphan it unseen
  } catch (error) {
    spare?.abandon(); // a spare not recorded runs nothing
    throw error;
  }
  // The pipes the command writes to, as /proc names them, to find who still holds them once the
  // group is gone. Read before the spare is handed its script (a cold start, for a script too long
  // for the loader, may have ended already: then nobody is named).
  const pipeIds = child.pid ? [1, 2].map((fd) => openPipeId(child.pid!, fd)).filter((id): id is string => id !== undefined) : [];
  spare?.start(); // only once recorded
  // The next command's process starts once this process only waits: as the model is asked, or beside this command if it runs long.
  spares?.want(loader, root);
  let stoppedBy: 'timeout' | 'abort' | 'output' | undefined;
  const stop = (why: 'timeout' | 'abort' | 'output') => {
    stoppedBy ??= why;
    handle.kill();
  };
  // stdout carries the command's output (stderr included); stderr only what the sandbox itself
  // says (bwrap failing to set up), shown after it. Bytes are decoded once at the end, so a
  // character split between two reads is never mangled; the live view gets a streaming decoder.
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  let journalChars = 0;
  const live = onOutput ? new StringDecoder('utf8') : undefined;
  const collect = (into: Buffer[]) => (chunk: Buffer) => {
    journalChars += journalSize(chunk);
    if (journalChars > MAX_OUTPUT_BYTES) return stop('output');
    into.push(chunk);
    if (live) onOutput!(live.write(chunk));
  };
  child.stdout!.on('data', collect(chunks));
  child.stderr!.on('data', collect(errors));
  // Cleared once bash exits: what is left then is reading, not the command.
  handle.limit(timeoutMs, () => (stoppedBy ??= 'timeout'));
  // After bash exited, the person's Ctrl-C ends the wait on the pipe (the command itself ended).
  let exited = false;
  const onAbort = () => (exited ? lookWhoHolds() : stop('abort'));
  signal?.addEventListener('abort', onAbort, { once: true });

  // When bash exits, what it left behind in its group goes too: a background child holding the
  // output pipe open would otherwise keep this call waiting. A process outside the group still
  // holding it is not waited on: `lookWhoHolds` stops reading once what the pipe holds is read.
  let settle: NodeJS.Timeout | undefined;
  let leftRunning: PipeHolder[] | undefined; // set when reading stopped with the pipe still held
  const streams = [child.stdout!, child.stderr!]; // a spare's script pipe closed before the command began
  let unseenLooks = 0;
  const lookWhoHolds = () => {
    clearTimeout(settle);
    const holders = pipeHolders(pipeIds);
    // Only processes of the killed group, not yet torn down (a big one takes a while): they will
    // close it. Nobody at all: it is closing as we look, or the holder was between two states /proc
    // does not show (its descriptors are unreadable while it execs): looked at again, three times.
    const closing = holders.length === 0 && pipeIds.length > 0 && unseenLooks < UNSEEN_LOOKS;
    if (closing || (holders.length > 0 && holders.every((holder) => holder.group === child.pid))) {
      if (closing) unseenLooks++;
      settle = setTimeout(lookWhoHolds, SETTLE_MS);
      return;
    }
    // The last read: setImmediate runs after the loop's next poll, which reads whatever the pipe
    // already holds (timers run before it, so stopping here could leave bytes unread).
    setImmediate(() => {
      const open = streams.filter((stream) => !stream.readableEnded && !stream.destroyed);
      if (open.length === 0) return; // it closed meanwhile: all was read
      leftRunning = holders.filter((holder) => holder.group !== child.pid);
      for (const stream of open) stream.destroy();
    });
  };
  child.once('exit', () => {
    exited = true;
    handle.kill();
    settle = setTimeout(lookWhoHolds, SETTLE_MS);
  });
  const result = await new Promise<{ exitCode?: number; signal?: string; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ error })); // it never started (no bwrap, no bash)
    child.once('close', (code, killedBy) => resolve({ exitCode: code ?? undefined, signal: killedBy ?? undefined }));
  }).finally(() => {
    spares?.commandEnded();
    clearTimeout(settle);
    signal?.removeEventListener('abort', onAbort);
  });
  const all = Buffer.concat([...chunks, ...errors]).toString('utf8');
  const output = all.replace(/\n$/, '');
  const shownOutput = output === '' ? '(no output)' : output;
  // A command that hit a sandbox boundary is told so (and the person, on its step line), in words
  // made from its output alone: recorded with the result, handed back the same on replay.
  const madeControlFiles = absent.filter((name) => existsSync(join(root, name)));
  const note =
    sandbox.kind === 'bwrap'
      ? sandboxNote(output, {
          root,
          gitDirs: gitDirs(),
          home: process.env.HOME,
          network: Boolean(sandbox.network),
          gitWrites: Boolean(sandbox.gitWrites),
          madeControlFiles,
        })
      : undefined;
  // A process that outlived the command holding its output is named, for the model and on the step line.
  const left = leftRunning && leftRunningNote(leftRunning);
  const noted = (result: ToolResult, notes = [note, left]): ToolResult => {
    const given = notes.filter((each) => each !== undefined);
    if (given.length === 0) return result;
    return {
      ...result,
      output: `${result.output}\n${given.map((each) => each.text).join('\n')}`,
      note: given.map((each) => each.short).join('; '),
    };
  };
  const everything = left ? 'the command and its process group' : 'the command and every process it started';

  if (stoppedBy === 'timeout') {
    const seconds = formatSeconds(timeoutMs);
    return noted(toolError(`timed out after ${seconds}; ${everything} were killed\n${shownOutput}`, `timed out after ${seconds}`));
  }
  if (stoppedBy === 'abort') {
    // Stopped by the person (Ctrl-C, SIGTERM, SIGHUP) or the caller: not a crash. The model hears
    // exactly that, with how long it ran and what it printed until then.
    const reason = signal?.reason;
    const who =
      reason instanceof StoppedBySignalError ? `by the person (${stopSignalWords(reason.data.signal)})` : 'by the caller (aborted)';
    const seconds = formatSeconds(Date.now() - startedAt);
    return noted(
      toolError(
        `stopped ${who} after ${seconds}: ${everything} were stopped before it ended. Its output so far:\n${shownOutput}`,
        `stopped ${reason instanceof StoppedBySignalError ? `by ${stopSignalWords(reason.data.signal).replace(/, .*$/, '')}` : '(aborted)'} after ${seconds}`,
      ),
    );
  }
  if (stoppedBy === 'output') {
    return noted(
      toolError(
        `stopped: the output passed 256 MB (control bytes such as NUL count six, as the journal stores them escaped)\n${shownOutput}`,
        'stopped: output over 256 MB',
      ),
      [left],
    );
  }
  if (result.exitCode === undefined) {
    // bash never started, or a signal from outside ended it.
    const why = result.signal
      ? `killed by ${result.signal}`
      : oneLine(`failed to start ${run.file}: ${result.error?.message ?? 'unknown reason'}`, 200);
    return noted(toolError(`${why}\n${shownOutput}`, oneLine(why, 60)), [left]);
  }
  const tail = lastLine(output);
  const summary = tail ? `exit ${result.exitCode}: ${oneLine(tail, 60)}` : `exit ${result.exitCode}`;
  return noted(toolOk(`exit ${result.exitCode}\n${shownOutput}`, summary));
}

// A spare started for this command alone and taken at once (undefined: the script does not fit the loader).
function startedAhead(loader: CommandLine, root: string, script: string): ReturnType<SpareShells['take']> {
  if (!fitsSpare(script)) return undefined;
  const once = new SpareShells();
  once.prepare(loader, root);
  return once.take(loader, root, script);
}

// The note naming the processes that left the command's group and held its output when reading
// stopped: still running, as far as run_bash knows (it does not stop them: they left on purpose).
function leftRunningNote(holders: PipeHolder[]): { text: string; short: string } {
  const after = 'run_bash stopped reading once the command had ended: what it prints from now on is not here.';
  if (holders.length === 0) {
    return {
      text: `note: a process the command started left its process group and holds its output open (which one, savepoint could not see), so it was not stopped; ${after}`,
      short: 'a process it started still runs',
    };
  }
  const shown = holders.slice(0, 5).map((holder) => `pid ${holder.pid} (${ellipsize(showControls(holder.command), 120)})`);
  if (holders.length > 5) shown.push(`${holders.length - 5} more`);
  const pids = holders.map((holder) => holder.pid).join(' ');
  return {
    text: `note: still running: ${shown.join(', ')}. It left the command's process group (setsid, a daemon) and holds the command's output open, so it was not stopped; ${after} Stop it with \`kill ${pids}\` once it is no longer needed.`,
    short: `still running: ${holders.length === 1 ? 'pid' : 'pids'} ${pids}`,
  };
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
