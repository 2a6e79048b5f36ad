import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { SFTPWrapper } from 'ssh2';

/**
 * SFTP write requests without ssh2's staging copy.
 *
 * ssh2's `sftp.write` copies the data into a new buffer holding the whole request (up to 256 KiB),
 * then copies it again, 32 KiB at a time, into the SSH packets it encrypts. On a large upload the
 * first copy is a third of the process's work and half its garbage (a full mark-compact for every
 * ~64 MB). This builds the request straight into the SSH packets: the data is copied once, into
 * the packet that is encrypted in place and sent. With ssh2's AES-GCM binding (built at install)
 * the packets themselves are framed here in buffers used again once the socket has sent them, and
 * one request's packets leave in one system call.
 *
 * It uses ssh2 1.x's internals (the channel's window and packet size, the protocol's packet writer,
 * the request table), checked once per channel; where anything is missing, or whenever the fast
 * path cannot keep ssh2's own ordering (the channel's window is short, requests wait in ssh2's
 * queue, keys are being renegotiated), it hands the request to `sftp.write` instead. The bytes on
 * the wire are the same either way: an SFTP WRITE message split over CHANNEL_DATA packets.
 */

interface PacketWriter {
  allocStart: number;
  alloc(size: number): Buffer;
  finalize(packet: Buffer): Buffer;
}

interface Internals {
  outgoing: { id: number; window: number; packetSize: number; state: string };
  _buffer: unknown[];
  _requests: Record<number, { cb: (err?: Error) => void }>;
  _writeReqid: number;
  _maxWriteLen: number;
  _protocol: { _kexinit: unknown; _packetRW: { write: PacketWriter }; _cipher?: object };
  _client?: { _sock?: { cork?: () => void; uncork?: () => void; writableLength?: number } };
}

type SendPacket = (proto: unknown, packet: Buffer) => boolean;

const sendPacket: SendPacket | undefined = (() => {
  try {
    const utils = createRequire(import.meta.url)('ssh2/lib/protocol/utils.js') as { sendPacket?: SendPacket };
    return typeof utils.sendPacket === 'function' ? utils.sendPacket : undefined;
  } catch {
    return undefined;
  }
})();

const MSG_CHANNEL_DATA = 94;
const SFTP_WRITE = 6;
const MAX_REQID = 2 ** 32 - 1;

const checked = new WeakMap<SFTPWrapper, boolean>();

function internals(sftp: SFTPWrapper): Internals | undefined {
  let ok = checked.get(sftp);
  const s = sftp as unknown as Partial<Internals>;
  if (ok === undefined) {
    const w = s._protocol?._packetRW?.write;
    ok =
      sendPacket !== undefined &&
      typeof s.outgoing?.window === 'number' &&
      typeof s.outgoing.packetSize === 'number' &&
      typeof s.outgoing.id === 'number' &&
      Array.isArray(s._buffer) &&
      typeof s._requests === 'object' &&
      s._requests !== null &&
      typeof s._writeReqid === 'number' &&
      typeof s._maxWriteLen === 'number' &&
      typeof w?.alloc === 'function' &&
      typeof w.finalize === 'function' &&
      typeof w.allocStart === 'number';
    checked.set(sftp, ok);
  }
  return ok ? (s as Internals) : undefined;
}

/**
 * SSH binary packets (RFC 4253 section 6) framed here, in buffers used again, for a cipher that
 * encrypts in place and appends its 16-byte tag (ssh2's AES-GCM binding, RFC 5647): what ssh2's
 * `allocPacket` does, less a new buffer and a call for random bytes per packet. Padding comes from
 * a reserve of random bytes, each byte used once.
 */
class InPlaceFraming {
  private readonly spare: Buffer[] = [];
  private readonly reserve = Buffer.allocUnsafe(4096);
  private reserveAt = this.reserve.length;
  /** Largest packet framed so far: the size of every pooled buffer. */
  private size = 0;

  /** A packet for `payloadLen` bytes of payload; its buffer is added to `lent` for `giveBack`. */
  frame(payloadLen: number, lent: Buffer[]): Buffer {
    let pktLen = 4 + 1 + payloadLen;
    let padLen = 16 - ((pktLen - 4) & 15);
    if (padLen < 4) padLen += 16;
    pktLen += padLen;
    const need = pktLen + 16;
    if (need > this.size) {
      this.size = need;
      this.spare.length = 0;
    }
    const buf = this.spare.pop() ?? Buffer.allocUnsafeSlow(this.size);
    lent.push(buf);
    const packet = buf.subarray(0, need);
    packet.writeUInt32BE(pktLen - 4, 0);
    packet[4] = padLen;
    if (this.reserveAt + padLen > this.reserve.length) {
      randomFillSync(this.reserve);
      this.reserveAt = 0;
    }
    this.reserve.copy(packet, 5 + payloadLen, this.reserveAt, this.reserveAt + padLen);
    this.reserveAt += padLen;
    return packet;
  }

  giveBack(buffers: Buffer[]): void {
    for (const b of buffers) {
      if (this.spare.length >= 64) return;
      if (b.length === this.size) this.spare.push(b);
    }
  }
}

const framings = new WeakMap<object, InPlaceFraming | null>();

/** The pooled framing for this channel's current cipher, or undefined to let ssh2 allocate. */
function inPlaceFraming(s: Internals): InPlaceFraming | undefined {
  const cipher = s._protocol._cipher;
  if (!cipher || s._protocol._packetRW.write.allocStart !== 5) return undefined;
  let f = framings.get(cipher);
  if (f === undefined) {
    // A new cipher object after every key exchange; the class is checked once for each.
    f =
      cipher.constructor.name === 'AESGCMCipherBinding' &&
      s._protocol._packetRW.write.constructor.name === 'PacketWriter'
        ? new InPlaceFraming()
        : null;
    framings.set(cipher, f);
  }
  return f ?? undefined;
}

/** How the last writes went (tests and diagnostics): direct, or through `sftp.write`. */
export const directWriteCounts = { direct: 0, fallback: 0, pooledPackets: 0 };

/** Bytes of a WRITE request for `len` bytes of data on `handle`. */
function requestLength(handle: Buffer, len: number): number {
  // uint32 length, byte type, uint32 id, string handle, uint64 offset, string data
  return 4 + 1 + 4 + 4 + handle.length + 8 + 4 + len;
}

function direct(s: Internals | undefined, handle: Buffer, len: number): s is Internals {
  return (
    s !== undefined &&
    len > 0 &&
    len <= s._maxWriteLen &&
    s.outgoing.state === 'open' &&
    s._buffer.length === 0 &&
    // Strictly more than needed: the window never reaches 0 here, so ssh2's wait-for-window state
    // (set only by its own path) stays as it was.
    s.outgoing.window > requestLength(handle, len) &&
    s._protocol._kexinit === undefined
  );
}

function windowShort(sftp: SFTPWrapper, handle: Buffer, len: number): boolean {
  const s = internals(sftp);
  return s !== undefined && s.outgoing.state === 'open' && !direct(s, handle, len);
}

/** Longest wait for the window, with none of the caller's writes in flight, before ssh2 queues. */
const MAX_IDLE_WINDOW_WAIT_MS = 200;

/**
 * Waits until a write of `len` bytes can go out without ssh2 copying it into its queue: until the
 * server opens the channel's window again (it does as it takes the data in, before it answers) and
 * nothing else waits in ssh2's queue. With writes of the caller's in flight it waits for them, one
 * at a time; with none (the window is another upload's on the same channel) it checks every
 * millisecond, at most MAX_IDLE_WINDOW_WAIT_MS.
 */
export async function untilWindow(
  sftp: SFTPWrapper,
  handle: Buffer,
  len: number,
  inFlight: ReadonlySet<Promise<unknown>>,
): Promise<void> {
  let idleUntil: number | undefined;
  while (windowShort(sftp, handle, len)) {
    if (inFlight.size > 0) {
      await Promise.race(inFlight);
      idleUntil = undefined;
      continue;
    }
    idleUntil ??= performance.now() + MAX_IDLE_WINDOW_WAIT_MS;
    if (performance.now() >= idleUntil) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Writes `data` at `pos` of the open file `handle`: one WRITE request, so `data` must not be longer
 * than the server takes in one (`maxWriteLength`). `data` is read before this returns when the
 * request goes direct, and must stay unchanged until the promise settles (as with `sftp.write`).
 */
export function writeRequest(sftp: SFTPWrapper, handle: Buffer, data: Buffer, pos: number): Promise<void> {
  const s = internals(sftp);
  if (!direct(s, handle, data.length)) {
    directWriteCounts.fallback += 1;
    return new Promise((resolve, reject) =>
      sftp.write(handle, data, 0, data.length, pos, (err) => (err ? reject(err) : resolve())),
    );
  }
  const total = requestLength(handle, data.length);
  const headerLen = total - data.length;
  directWriteCounts.direct += 1;
  const reqid = (s._writeReqid = (s._writeReqid + 1) & MAX_REQID);
  const done = new Promise<void>((resolve, reject) => {
    s._requests[reqid] = { cb: (err) => (err ? reject(err) : resolve()) };
  });
  const writer = s._protocol._packetRW.write;
  const framing = inPlaceFraming(s);
  const chan = s.outgoing.id;
  const packetSize = s.outgoing.packetSize;
  s.outgoing.window -= total;
  // The request's packets leave in one system call.
  const sock = s._client?._sock;
  const corked = typeof sock?.cork === 'function' && typeof sock.uncork === 'function';
  if (corked) sock.cork!();
  const lent: Buffer[] = [];
  let sent = 0; // bytes of the SFTP message sent so far
  while (sent < total) {
    const n = Math.min(packetSize, total - sent);
    const start = writer.allocStart;
    let packet: Buffer;
    if (framing) {
      packet = framing.frame(1 + 4 + 4 + n, lent);
      directWriteCounts.pooledPackets += 1;
    } else {
      packet = writer.alloc(1 + 4 + 4 + n);
    }
    packet[start] = MSG_CHANNEL_DATA;
    packet.writeUInt32BE(chan, start + 1);
    packet.writeUInt32BE(n, start + 5);
    let p = start + 9;
    let room = n;
    if (sent === 0) {
      // The request's head, then as much data as fits.
      p = packet.writeUInt32BE(total - 4, p);
      packet[p++] = SFTP_WRITE;
      p = packet.writeUInt32BE(reqid, p);
      p = packet.writeUInt32BE(handle.length, p);
      p += handle.copy(packet, p);
      p = packet.writeUInt32BE(Math.floor(pos / 2 ** 32), p);
      p = packet.writeUInt32BE(pos >>> 0, p);
      p = packet.writeUInt32BE(data.length, p);
      room -= headerLen;
    }
    const from = sent === 0 ? 0 : sent - headerLen;
    if (room > 0) packet.set(data.subarray(from, from + room), p);
    sendPacket!(s._protocol, writer.finalize(packet));
    sent += n;
  }
  if (corked) sock.uncork!();
  // Packets the socket has handed to the kernel can frame the next request; any still queued in
  // the socket are left to the collector.
  if (framing && sock?.writableLength === 0) framing.giveBack(lent);
  return done;
}
