#!/usr/bin/env node
/** `skyferry`: the command line entry (see cli.ts for the commands). */
import { runCli } from './cli.ts';

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

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  signal: controller.signal,
});
