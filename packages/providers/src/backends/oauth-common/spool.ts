import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { canceled } from '../../api/errors.ts';
import { keepErrorListener } from '../../net/listeners.ts';
import type { ByteSource } from './take.ts';

/**
 * For services whose upload sessions need the total size up front (Microsoft Graph, Box) when the
 * source cannot give it: the rest of the stream is written to a private temporary file, then
 * uploaded with a known size. Only used for unknown sizes; the backends declare `needsSize`.
 */
export interface Spooled {
  size: number;
  open(): Readable;
  cleanup(): Promise<void>;
}

export async function spoolToTemp(
  first: Buffer[],
  reader: ByteSource,
  pieceSize: number,
  signal?: AbortSignal,
): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'skyferry-spool-'));
  const file = join(dir, 'data');
  // A failed write (a full disk) reaches its callback; the event must not end the process.
  const out = keepErrorListener(createWriteStream(file, { mode: 0o600 }));
  let size = 0;
  const write = (b: Buffer) =>
    new Promise<void>((resolve, reject) => {
      out.write(b, (err) => (err ? reject(err) : resolve()));
    });
  try {
    for (const b of first) {
      await write(b);
      size += b.length;
    }
    for (;;) {
      if (signal?.aborted) throw canceled();
      const b = await reader.read(pieceSize, signal);
      if (!b) break;
      await write(b);
      size += b.length;
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  } catch (err) {
    out.destroy();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    size,
    open: () => keepErrorListener(createReadStream(file)),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
