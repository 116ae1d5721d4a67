// The first lines of a run on the terminal: `savepoint  run <id>  ·  model <model>`, on one line when
// it fits. Otherwise the model goes on a line of its own, and an id or a model name longer than the
// terminal is broken after a `-` or a `/` (never cut: the id is what `log`, `show` and `resume`
// are given), each piece on a line of its own under the first.
import { chunkColumns, displayWidth, showControls } from '../../format/text.js';
import type { Style } from '../terminal/style.js';

/** The header's lines (without their line breaks), each at most `style.width` columns. */
export function headerLines(run: string, model: string, style: Style): string[] {
  const [id, name] = [showControls(run), showControls(model)];
  const width = style.width;
  if (displayWidth(`savepoint  run ${id}  ·  model ${name}`) <= width) {
    return [`${style.bold('savepoint')}  run ${style.cyan(id)}  ${style.dim('·')}  model ${name}`];
  }
  const runLead = 'savepoint  run ';
  const ids = breakAfter(id, width - runLead.length);
  const modelLead = '  model ';
  const names = breakAfter(name, width - modelLead.length);
  return [
    `${style.bold('savepoint')}  run ${style.cyan(ids[0]!)}`,
    ...ids.slice(1).map((piece) => `${' '.repeat(runLead.length)}${style.cyan(piece)}`),
    `${modelLead}${names[0]!}`,
    ...names.slice(1).map((piece) => `${' '.repeat(modelLead.length)}${piece}`),
  ];
}

/** `text` in pieces of at most `width` columns, each ending after a `-` or `/` where one is in reach. */
export function breakAfter(text: string, width: number): string[] {
  const room = Math.max(8, width);
  const pieces: string[] = [];
  let rest = text;
  while (displayWidth(rest) > room) {
    const [head] = chunkColumns(rest, room);
    const at = Math.max(head!.lastIndexOf('-'), head!.lastIndexOf('/'));
    // A break in the first half of the room would leave a stub of a line: cut at the width instead.
    const cut = at >= Math.floor(head!.length / 2) ? at + 1 : head!.length;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  pieces.push(rest);
  return pieces;
}
