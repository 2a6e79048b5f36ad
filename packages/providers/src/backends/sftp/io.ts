import { Readable } from 'node:stream';
import { keepErrorListener } from '../../net/listeners.ts';
import type { BufferRing } from '../../recycle.ts';
import type { FileEntry, InputAttributes, OpenMode, SFTPWrapper, Stats } from 'ssh2';

/** Promise forms of the ssh2 SFTP calls we use. */
export const sftpCall = {
  stat: (s: SFTPWrapper, p: string) =>
    new Promise<Stats>((res, rej) => s.stat(p, (err, st) => (err ? rej(err) : res(st)))),
  lstat: (s: SFTPWrapper, p: string) =>
    new Promise<Stats>((res, rej) => s.lstat(p, (err, st) => (err ? rej(err) : res(st)))),
  readdir: (s: SFTPWrapper, p: string) =>
    new Promise<FileEntry[]>((res, rej) => s.readdir(p, (err, list) => (err ? rej(err) : res(list)))),
  open: (s: SFTPWrapper, p: string, flags: OpenMode, mode?: number) =>
    new Promise<Buffer>((res, rej) =>
      mode === undefined
        ? s.open(p, flags, (err, h) => (err ? rej(err) : res(h)))
        : s.open(p, flags, { mode }, (err, h) => (err ? rej(err) : res(h))),
    ),
  close: (s: SFTPWrapper, h: Buffer) => new Promise<void>((res, rej) => s.close(h, (err) => (err ? rej(err) : res()))),
  fstat: (s: SFTPWrapper, h: Buffer) =>
    new Promise<Stats>((res, rej) => s.fstat(h, (err, st) => (err ? rej(err) : res(st)))),
  futimes: (s: SFTPWrapper, h: Buffer, atime: Date, mtime: Date) =>
    new Promise<void>((res, rej) => s.futimes(h, atime, mtime, (err) => (err ? rej(err) : res()))),
  setstat: (s: SFTPWrapper, p: string, attrs: InputAttributes) =>
    new Promise<void>((res, rej) => s.setstat(p, attrs, (err) => (err ? rej(err) : res()))),
  unlink: (s: SFTPWrapper, p: string) =>
    new Promise<void>((res, rej) => s.unlink(p, (err) => (err ? rej(err) : res()))),
  rmdir: (s: SFTPWrapper, p: string) => new Promise<void>((res, rej) => s.rmdir(p, (err) => (err ? rej(err) : res()))),
  mkdir: (s: SFTPWrapper, p: string) => new Promise<void>((res, rej) => s.mkdir(p, (err) => (err ? rej(err) : res()))),
  rename: (s: SFTPWrapper, from: string, to: string) =>
    new Promise<void>((res, rej) => s.rename(from, to, (err) => (err ? rej(err) : res()))),
  posixRename: (s: SFTPWrapper, from: string, to: string) =>
    new Promise<void>((res, rej) => s.ext_openssh_rename(from, to, (err) => (err ? rej(err) : res()))),
  realpath: (s: SFTPWrapper, p: string) =>
    new Promise<string>((res, rej) => s.realpath(p, (err, abs) => (err ? rej(err) : res(abs)))),
  statvfs: (s: SFTPWrapper, p: string) =>
    new Promise<{ f_frsize: number; f_bsize: number; f_blocks: number; f_bfree: number; f_bavail: number }>(
      (res, rej) =>
        s.ext_openssh_statvfs(
          p,
          (err, info: { f_frsize: number; f_bsize: number; f_blocks: number; f_bfree: number; f_bavail: number }) =>
            err ? rej(err) : res(info),
        ),
    ),
  copyData: (s: SFTPWrapper, src: Buffer, dst: Buffer) =>
    new Promise<void>((res, rej) => s.ext_copy_data(src, 0, 0, dst, 0, (err) => (err ? rej(err) : res()))),
  /**
   * Reads exactly `len` bytes at `pos` (fewer only at end of file), re-asking after short reads,
   * into `into` when given (at least `len` bytes), else a new buffer.
   */
  read: async (s: SFTPWrapper, h: Buffer, pos: number, len: number, into?: Buffer): Promise<Buffer> => {
    const buf = into ?? Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = await new Promise<number>((res, rej) =>
        s.read(h, buf, got, len - got, pos + got, (err, bytes) => {
          // ssh2 reports end of file as an error with code 1 (SSH_FX_EOF).
          if (err && (err as { code?: number }).code === 1) res(0);
          else if (err) rej(err);
          else res(bytes);
        }),
      );
      if (n === 0) break;
      got += n;
    }
    return got === buf.length ? buf : buf.subarray(0, got);
  },
};

export interface PipelinedReadOptions {
  sftp: SFTPWrapper;
  handle: Buffer;
  start: number;
  /** Offset one past the last byte to read. */
  end: number;
  chunk: number;
  inFlight: number;
  /** Called once when the stream ends or is destroyed (closes the handle, frees the connection). */
  onDone: () => Promise<void>;
  mapError: (err: unknown) => Error;
  /** Buffers of `chunk` bytes to read into (see recycle.ts); without it each read gets a new one. */
  ring?: BufferRing;
}

/**
 * One read request of a pipelined read. A whole request reads into a buffer of the ring, lent on
 * (the final writer gives it back); a buffer that got nothing, or whose read failed, goes back at once.
 */
async function readRequest(o: PipelinedReadOptions, pos: number, len: number): Promise<Buffer> {
  const ring = o.ring && len === o.ring.size ? o.ring : undefined;
  if (!ring) return sftpCall.read(o.sftp, o.handle, pos, len);
  const into = ring.take();
  let buf: Buffer;
  try {
    buf = await sftpCall.read(o.sftp, o.handle, pos, len, into);
  } catch (err) {
    ring.putBack(into);
    throw err;
  }
  if (buf.length > 0) return ring.lend(into, buf.length);
  ring.putBack(into);
  return buf;
}

/**
 * A Readable over an open SFTP file that keeps several read requests in flight (like ssh2's
 * fastGet, but as a stream with backpressure): the link stays busy instead of waiting one round
 * trip per 32 KB.
 */
export function pipelinedReadStream(o: PipelinedReadOptions): Readable {
  let next = o.start;
  const queue: Array<{ len: number; data: Promise<Buffer> }> = [];
  let pumping = false;
  let done = false;
  const finish = async () => {
    if (done) return;
    done = true;
    // Let outstanding reads settle before the handle closes.
    await Promise.allSettled(queue.map((q) => q.data));
    await o.onDone().catch(() => undefined);
  };
  const stream = keepErrorListener(
    new Readable({
      highWaterMark: o.chunk * 4,
      read() {
        if (pumping) return;
        pumping = true;
        void pump();
      },
      destroy(err, cb) {
        finish().then(
          () => cb(err),
          () => cb(err),
        );
      },
    }),
  );
  const fill = () => {
    while (queue.length < o.inFlight && next < o.end) {
      const len = Math.min(o.chunk, o.end - next);
      const data = readRequest(o, next, len);
      data.catch(() => undefined);
      queue.push({ len, data });
      next += len;
    }
  };
  const pump = async () => {
    try {
      for (;;) {
        fill();
        const head = queue[0];
        if (!head) {
          await finish();
          stream.push(null);
          return;
        }
        const buf = await head.data;
        queue.shift();
        if (stream.destroyed) return;
        if (buf.length < head.len) {
          // The file ended early (it shrank meanwhile): stop after this piece.
          next = o.end;
          for (const q of queue.splice(0)) q.data.catch(() => undefined);
        }
        const more = buf.length > 0 ? stream.push(buf) : true;
        if (!more) {
          pumping = false;
          return;
        }
      }
    } catch (err) {
      stream.destroy(o.mapError(err));
    }
  };
  return stream;
}
