#!/usr/bin/env node
// `skyferry`: plain JavaScript, so that a help or the version answers without loading Node's type
// stripper; everything else runs the bundle `npm run build:cli` made (../dist/skyferry.mjs) while
// every source it was made from is unchanged, else the TypeScript entry (../src/main.ts).
import { readFileSync, statSync } from 'node:fs';
import { enableCompileCache } from 'node:module';

/** Whether the bundle is there and made from the sources as they are now. */
function bundleIsFresh() {
  try {
    const sources = JSON.parse(readFileSync(new URL('../dist/sources.json', import.meta.url), 'utf8'));
    return sources.every(([path, mtimeMs, size]) => {
      const s = statSync(path, { throwIfNoEntry: false });
      return s !== undefined && s.mtimeMs === mtimeMs && s.size === size;
    });
  } catch {
    return false;
  }
}

const argv = process.argv.slice(2);
if (argv.every((a) => ['--help', '-h', 'help', '--version', '-V'].includes(a))) {
  const { helpText, version } = await import('../src/help.js');
  if (argv.includes('--version') || argv.includes('-V')) process.stdout.write(`skyferry ${await version()}\n`);
  else process.stdout.write(helpText());
  process.exitCode = argv.length === 0 ? 2 : 0;
} else if (argv[0] === 'completion') {
  const { completionScript } = await import('../src/completion.js');
  const script = argv.length === 2 ? completionScript(argv[1]) : undefined;
  if (script) process.stdout.write(script);
  else {
    process.stderr.write('usage: skyferry completion bash|zsh|fish\n');
    process.exitCode = 2;
  }
} else {
  // Node keeps what it compiled of each module (the command line and its npm dependencies) in its
  // cache folder: enabled before anything loads, later starts skip most of the compiling.
  // NODE_COMPILE_CACHE names the folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  enableCompileCache();
  if (bundleIsFresh()) await import('../dist/skyferry.mjs');
  else await import('../src/main.ts');
}
