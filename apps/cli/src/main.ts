#!/usr/bin/env node
/** `skyferry`: the command line entry (see cli.ts for the commands). */
import { enableCompileCache } from 'node:module';

// Node keeps what it made of each module (types stripped, compiled) in its cache folder, checked
// against the source: later starts load the command line faster (`--help` in 0.5 to 0.8 s against
// 0.8 to 1.1 s here). The folder is the system's temporary one unless NODE_COMPILE_CACHE names
// another; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache();

const argv = process.argv.slice(2);

const controller = new AbortController();
let interrupted = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // The first interrupt cancels the run cleanly (no partial file left visible); a second one quits.
    if (++interrupted > 1) process.exit(130);
    process.stderr.write('\nCanceling: finishing cleanly (press Ctrl-C again to quit at once)...\n');
    controller.abort();
  });
}

// Loaded once the handlers are in place: an interrupt while the modules load (most of a second)
// is a cancel too, not the end of the process by the signal.
const { runCli } = await import('./cli.ts');
process.exitCode = await runCli(argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  signal: controller.signal,
});
