/** Runs the command line in-process in a folder of its own (the same runCli the bin calls), for tests. */
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { runCli } from './cli.ts';

export function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return Object.assign(w, { text: () => chunks.join('') });
}

/** Runs `argv` in `dir` (its remotes file and state there too), `input` as its standard input. */
export async function runIn(
  dir: string,
  input: string | undefined,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(argv, {
    stdout,
    stderr,
    ...(input !== undefined ? { stdin: Readable.from([Buffer.from(input)]) } : {}),
    cwd: dir,
    env: {
      HOME: dir,
      SKYFERRY_CONFIG: join(dir, 'remotes.json'),
      SKYFERRY_STATE_DIR: join(dir, 'state'),
      S3_SECRET: 'from-env-secret',
    },
  });
  return { code, out: stdout.text(), err: stderr.text() };
}
