// The model providers of one run (drive.ts): one per model the run uses, made on its first live call.
import { createProvider } from '../model/index.js';
import type { ModelNotice, ModelProvider } from '../model/index.js';
import type { SessionOptions } from './types.js';

/**
 * The provider of each model the run uses, made once on its first live call; it tells what the SDK
 * says about that model once. A provider the caller gave serves every model.
 */
export function providerFor(
  given: SessionOptions['provider'],
  onNotice: (notice: ModelNotice) => void,
  maxRetryWait: number | undefined,
): (model: string) => Promise<ModelProvider> {
  const made = new Map<string, Promise<ModelProvider>>();
  const options = { onNotice, ...(maxRetryWait !== undefined ? { maxRetryWait } : {}) };
  return (model) => {
    let provider = made.get(model);
    if (!provider)
      made.set(model, (provider = Promise.resolve(typeof given === 'function' ? given() : (given ?? createProvider(model, options)))));
    return provider;
  };
}
