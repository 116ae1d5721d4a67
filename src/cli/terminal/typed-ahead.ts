// Keys typed before a question appeared. A terminal in its normal mode holds what is typed until
// Enter, and hands it to whoever reads next: a turn's approval question would take a line typed
// before it (a message meant for later, or a "y" meant for another question) as its answer. So the
// question first takes what is waiting off the terminal: read in raw mode, as readline reads, for
// as long as keys already there take to arrive. As ssh and sudo flush input before a password.

// How long pending keys are read: they arrive in the first read after resuming (one turn of the
// event loop); this leaves room for a busy machine and is not felt before a question.
const TYPED_AHEAD_WAIT_MS = 15;

/**
 * The keys waiting on the terminal `input` (this process's stdin by default), taken off it; ''
 * when it is not a terminal. A Ctrl-C among them is what the terminal would have made of it in
 * its normal mode: SIGINT to this process (and `interrupted` is true).
 */
export async function takeTypedAhead(input: NodeJS.ReadStream = process.stdin): Promise<{ keys: string; interrupted: boolean }> {
  if (!input.isTTY || typeof input.setRawMode !== 'function') return { keys: '', interrupted: false };
  const wasRaw = input.isRaw;
  const decoder = new TextDecoder();
  let keys = '';
  const take = (chunk: Buffer | string) => void (keys += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  input.setRawMode(true);
  input.on('data', take);
  input.resume();
  try {
    await new Promise((settle) => setTimeout(settle, TYPED_AHEAD_WAIT_MS));
    // And then one more turn of the event loop: a process held off the CPU past the wait runs its
    // timers before it polls the terminal; this makes that poll come before the reading stops.
    await new Promise((settle) => setImmediate(settle));
  } finally {
    input.off('data', take);
    input.pause();
    input.setRawMode(wasRaw);
  }
  keys += decoder.decode();
  if (!keys.includes('\x03')) return { keys, interrupted: false };
  process.kill(process.pid, 'SIGINT');
  return { keys, interrupted: true };
}

/**
 * Takes the keys typed ahead off the terminal and drops them. Outside a session they mean nothing
 * to the run, and a "y" typed early must not approve a call the person has not seen yet: the
 * question answers only to what is typed after it appears.
 */
export async function dropTypedAhead(): Promise<void> {
  await takeTypedAhead();
}
