import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Client } from 'basic-ftp';
import { keepErrorListener } from '../../net/listeners.ts';
import type { BufferRing } from '../../recycle.ts';

/**
 * What a download is given as its data connection reads: each read, lent from the ring (recycle.ts),
 * and the socket; false pauses the socket (resume it to read on).
 */
export type DataReader = (chunk: Buffer, socket: Socket) => boolean;

/**
 * Has the next data connection `c` opens read straight into buffers of `ring` (net's `onread`),
 * each read lent to `take`, instead of a fresh buffer per read handed through basic-ftp's pipe: a
 * gigabyte downloaded then leaves no garbage behind, and goes through one hand-off instead of three
 * (loopback vsftpd: 430 MB/s before, against rclone's 1,040). basic-ftp makes its sockets through
 * `FTPContext._newSocket` ("replaced for unit tests"); it is replaced for that one socket only.
 *
 * Plain FTP only: over TLS the data socket is wrapped by a TLSSocket that reads the raw socket
 * itself, so nothing changes and the download goes through basic-ftp's pipe. Answers what puts
 * basic-ftp's own maker back, for when no data connection was opened after all (a no-op over TLS
 * or once the socket was made).
 */
export function readNextDataInto(c: Client, ring: BufferRing, take: DataReader): () => void {
  const ctx = c.ftp as unknown as { socket: Socket; _newSocket?: () => Socket };
  if (ctx.socket instanceof TLSSocket) return () => undefined;
  // The maker in place before (connectFtp's, which keeps an error listener on every socket).
  const own = Object.prototype.hasOwnProperty.call(ctx, '_newSocket');
  const previous = ctx._newSocket;
  const restore = () => {
    if (own) ctx._newSocket = previous;
    else delete ctx._newSocket;
  };
  ctx._newSocket = () => {
    restore();
    let next: Buffer | undefined;
    const socket: Socket = new Socket({
      onread: {
        buffer: () => (next = ring.take()),
        callback: (n: number, buf: Buffer) => {
          next = undefined;
          if (take(ring.lend(buf, n), socket)) return true;
          // A false answer alone stops the reads without marking the socket paused (and
          // basic-ftp's watchdog counts a socket not paused and not reading as a stalled server).
          socket.pause();
          return false;
        },
      },
    } as ConstructorParameters<typeof Socket>[0]);
    socket.once('close', () => {
      if (next) ring.putBack(next);
      next = undefined;
    });
    return keepErrorListener(socket);
  };
  return restore;
}
