import { join } from 'node:path';
import { build } from 'rolldown';

/** Builds testing/page-bridge.ts into one script to inject into a page (what the preload bundles). */
export async function pageBridgeScript(): Promise<string> {
  const out = await build({
    input: join(import.meta.dirname, 'page-bridge.ts'),
    platform: 'browser',
    write: false,
    output: { format: 'iife' },
    logLevel: 'warn',
  });
  const chunk = out.output[0];
  if (!chunk || chunk.type !== 'chunk') throw new Error('page bridge did not build');
  return chunk.code;
}
