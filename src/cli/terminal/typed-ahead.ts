// Keys typed before a question appeared. A terminal in its normal mode holds what is typed until
// Enter, and hands it to whoever reads next: a turn's approval question would take a line typed
// before it (a message meant for later, or a "y" meant for another question) as its answer. So the
// question first takes what is waiting off the terminal: read in raw mode, as readline reads, for
// as long as keys already there take to arrive. As ssh and sudo flush input before a password.
// Keys typed ahead split into messages at each Enter, except inside a block the terminal bracketed
// as pasted (ESC[200~ ... ESC[201~): a pasted block of several lines stays one message.

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
  // A Ctrl-C character inside a pasted block is text that was pasted, not a key pressed.
  if (!outsidePastes(keys).includes('\x03')) return { keys, interrupted: false };
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

/** What a terminal sends before pasted text once asked for bracketed paste (ESC[?2004h). */
export const PASTE_START = '\x1b[200~';
/** What it sends after the pasted text. */
export const PASTE_END = '\x1b[201~';
/** Asks the terminal to bracket pasted text (a session's prompt turns it on), and to stop. */
export const BRACKETED_PASTE_ON = '\x1b[?2004h';
export const BRACKETED_PASTE_OFF = '\x1b[?2004l';

/**
 * Keys typed ahead, split into the messages they send: each Enter outside a pasted block ends one;
 * a pasted block (between PASTE_START and PASTE_END) is part of the message it was pasted into,
 * its newlines kept. The last element is what has no Enter yet, as typed (markers included), to be
 * finished at the next prompt; the others are the messages' text (see typedText).
 */
export function typedMessages(keys: string): string[] {
  const messages: string[] = [];
  let current = '';
  for (let i = 0; i < keys.length;) {
    if (keys.startsWith(PASTE_START, i)) {
      const end = keys.indexOf(PASTE_END, i + PASTE_START.length);
      // A block still arriving: it waits whole, with what comes before it.
      const stop = end < 0 ? keys.length : end + PASTE_END.length;
      current += keys.slice(i, stop);
      i = stop;
      continue;
    }
    const char = keys[i]!;
    if (char === '\r' || char === '\n') {
      messages.push(typedText(current));
      current = '';
      i += char === '\r' && keys[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    current += char;
    i++;
  }
  return [...messages, current];
}

/**
 * The text of keys typed ahead: without the escape sequences of keys that edit a line (arrows),
 * which a queued line cannot replay, nor other control characters; a pasted block's text is kept,
 * its line breaks as newlines (and its tabs).
 */
export function typedText(keys: string): string {
  return splitPastes(keys)
    .map(({ text, pasted }) => (pasted ? pastedText(text) : withoutControls(text)))
    .join('');
}

/** The text of a pasted block (without its markers): its line breaks as newlines, other control characters dropped. */
export function pastedText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return withoutEscapes(text.replace(/\r\n|\r/g, '\n')).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
}

/** `keys` cut into the parts typed and the blocks pasted (an unfinished block runs to the end, `open`), markers left out. */
export function splitPastes(keys: string): Array<{ text: string; pasted: boolean; open?: boolean }> {
  const parts: Array<{ text: string; pasted: boolean; open?: boolean }> = [];
  let at = 0;
  for (;;) {
    const start = keys.indexOf(PASTE_START, at);
    if (start < 0) break;
    if (start > at) parts.push({ text: keys.slice(at, start), pasted: false });
    const end = keys.indexOf(PASTE_END, start + PASTE_START.length);
    parts.push({
      text: keys.slice(start + PASTE_START.length, end < 0 ? keys.length : end),
      pasted: true,
      ...(end < 0 ? { open: true } : {}),
    });
    at = end < 0 ? keys.length : end + PASTE_END.length;
  }
  if (at < keys.length) parts.push({ text: keys.slice(at).replace(PASTE_END, ''), pasted: false });
  return parts;
}

// The keys typed, without the blocks pasted among them.
function outsidePastes(keys: string): string {
  return splitPastes(keys)
    .filter((part) => !part.pasted)
    .map((part) => part.text)
    .join('');
}

function withoutEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*[A-Za-z~]|\x1b./g, '');
}

function withoutControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return withoutEscapes(text).replace(/[\x00-\x1f\x7f]/g, '');
}
