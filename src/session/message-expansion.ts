// What the model is sent for what the person typed: a custom command (`/greet Ada`) becomes its
// text, then each `@path` mention brings the file's text. What the person typed stays the run's
// identity (the task a run id derives from, a follow-up's words); the expansion is recorded beside
// it (run.json's `prompt`, the user step's result), so a replay sends exactly what was sent, even
// after the command file or a mentioned file changed.
import { customCommand, expandCustomCommand, type CustomCommand } from '../settings/index.js';
import { expandMentions, type MentionContext } from './mentions.js';

/** How a session expands what the person typed (the CLI gives it; a library caller may leave it out: then nothing is expanded). */
export interface MessageExpansion {
  /** The custom commands in force (settings' findCustomCommands, the built-in names left out); a repository's in an untrusted folder are marked. */
  commands?: readonly CustomCommand[];
  /** `@path` mentions bring the files' text. */
  mentions?: boolean;
}

/**
 * `typed` as the model is sent it, or undefined when that is `typed` itself: a first word naming
 * a custom command is replaced by the command's text (anything else starting with "/" is plain
 * text: a task may begin with a path), and mentions bring their files. Throws CustomCommandError
 * or MentionRefusedError, before anything is sent.
 */
export function expandMessage(typed: string, expansion: MessageExpansion | undefined, context: MentionContext): string | undefined {
  if (!expansion) return undefined;
  let text = typed.trim();
  const named = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text);
  const command = named && expansion.commands ? customCommand(expansion.commands, named[1]!) : undefined;
  if (command) text = expandCustomCommand(command, named![2] ?? '');
  if (expansion.mentions) text = expandMentions(text, context);
  return text === typed.trim() ? undefined : text;
}
