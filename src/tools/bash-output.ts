// bash_output: what a background command (run_bash with run_in_background) printed since the last
// read, and whether it still runs. A read: safe to repeat, no approval. Live it reads the command's
// output, consuming it; on replay the journal hands back what was read then.
// Tested in test/tools/background.test.ts.
import { defineTool, toolError } from './define-tool.js';
import { BACKGROUND_ID_SCHEMA, type BackgroundCommands } from './background-commands.js';
import { asText } from './truncate.js';
import { oneLine } from '../format/text.js';
import type { Tool } from './types.js';

/** The input of a bash_output call. */
export interface BashOutputInput {
  id: string;
}

const description = `Reads what a background command (started with run_bash and run_in_background: true) printed since the last read of it, stdout and stderr together, and whether it still runs (its exit code once it has ended).
- id is the command's id from run_bash's result: bg-1, bg-2, ...
- Each read returns only the new output. Output nobody reads is kept up to 1 MB per command; past that the oldest is dropped, and the read says so.
- A background command stops with the run: after savepoint was stopped and the run resumed, it is not running, and the answer says when it stopped.`;

/** The bash_output tool, reading the run's background commands `background`. */
export function createBashOutputTool(background: BackgroundCommands | undefined): Tool<BashOutputInput> {
  return defineTool<BashOutputInput>({
    name: 'bash_output',
    description,
    inputSchema: BACKGROUND_ID_SCHEMA,
    describe: (input) => `bash_output ${oneLine(asText(input.id), 20)}`,
    // A read of this process's own commands: nothing to approve, and nothing a crash could leave half done.
    isRepeatSafe: () => true,
    needsApproval: () => false,
    // The command may have written files since the last step: the checkpoint after the read keeps them
    // as the run's, not as changes by hand at the next resume.
    mayChangeFiles: () => true,
    run: async ({ id }) => (background ? background.output(id) : toolError('Background commands are not available here.')),
  });
}
