// Whether this process loaded the live model's client (the SDK): a fact of the process, as a
// module's loading is. Its own module, with no imports, so that the command line can ask it as the
// process ends (which compiled code to keep, cli/main.ts) without loading the model's modules.

let loaded = false;

/** Notes that this process loaded the Anthropic provider (anthropic.ts, as it loads). */
export function noteLiveModelLoaded(): void {
  loaded = true;
}

/** Whether this process loaded the live model's client. */
export function liveModelLoaded(): boolean {
  return loaded;
}
