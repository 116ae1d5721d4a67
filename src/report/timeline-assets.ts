// The HTML timeline's stylesheet and script, kept as real files beside this module (timeline.css,
// timeline.js) so they can be read and edited as CSS and JS. `npm run build` copies them into
// dist/report/ (scripts/copy-assets.js), since tsc copies only what it compiles.
import { readFileSync } from 'node:fs';

/** The CSS and JS that the timeline page inlines. */
export interface TimelineAssets {
  css: string;
  js: string;
}

let loaded: TimelineAssets | undefined;

/** The timeline's assets, read from disk on first use and kept. */
export function timelineAssets(): TimelineAssets {
  loaded ??= {
    css: readFileSync(new URL('./timeline.css', import.meta.url), 'utf8'),
    js: readFileSync(new URL('./timeline.js', import.meta.url), 'utf8'),
  };
  return loaded;
}
