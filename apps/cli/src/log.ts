/**
 * `--log-file`: what the command line writes to stderr (warnings, failures, progress, each file
 * done) goes to a file instead, each line with its time, appended; the file is the user's alone.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { UsageError } from './errors.ts';

export type LogStream = Writable & { finish: () => Promise<void> };

export async function openLog(file: string): Promise<LogStream> {
  await mkdir(dirname(file), { recursive: true });
  const out = createWriteStream(file, { flags: 'a', mode: 0o600 });
  await new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', (err) => reject(new UsageError(`--log-file: cannot write ${file}: ${err.message}`)));
  });
  let partial = '';
  const log = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      const stamp = new Date().toISOString();
      const text = lines.map((l) => `${stamp} ${l}\n`).join('');
      if (text) out.write(text, done);
      else done();
    },
  });
  return Object.assign(log, {
    finish: async () => {
      if (partial) out.write(`${new Date().toISOString()} ${partial}\n`);
      partial = '';
      await new Promise<void>((resolve) => out.end(resolve));
    },
  });
}
