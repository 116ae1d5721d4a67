// kill_bash: stops a background command (run_bash with run_in_background), its whole process
// group: SIGTERM, then SIGKILL to whatever is left after two seconds. Safe to repeat: a command that
// had already ended, or stopped with an earlier savepoint, is said to be so.
// Tested in test/tools/background.test.ts.
import { defineTool, toolError } from './define-tool.js';
import { BACKGROUND_ID_SCHEMA, type BackgroundCommands } from './background-commands.js';
import { asText } from './truncate.js';
import { oneLine } from '../format/text.js';
import type { Tool } from './types.js';

/** The input of a kill_bash call. */
export interface KillBashInput {
  id: string;
}

const description = `Stops a background command started with run_bash and run_in_background: true, with every process it started (its process group): SIGTERM, then SIGKILL after 2 s. Returns its output since the last read.
- id is the command's id from run_bash's result: bg-1, bg-2, ...
- Stopping a command that has already ended is harmless: the answer says it had ended.`;

/** The kill_bash tool, stopping the run's background commands `background`. */
export function createKillBashTool(background: BackgroundCommands | undefined): Tool<KillBashInput> {
  return defineTool<KillBashInput>({
    name: 'kill_bash',
    description,
    inputSchema: BACKGROUND_ID_SCHEMA,
    describe: (input) => `kill_bash ${oneLine(asText(input.id), 20)}`,
    // Stopping the run's own command again changes nothing: no intent needed, no approval (it was approved when it started).
    isRepeatSafe: () => true,
    needsApproval: () => false,
    // What the command wrote until it stopped is the run's: checkpointed after this step.
    mayChangeFiles: () => true,
    run: async ({ id }) => (background ? background.kill(id) : toolError('Background commands are not available here.')),
  });
}
