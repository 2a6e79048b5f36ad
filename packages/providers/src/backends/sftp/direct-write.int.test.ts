import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync, statSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client, type SFTPWrapper } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshd, type SshServer } from '@skyferry/testing';
import { directWriteCounts, untilWindow, writeRequest } from './direct-write.ts';
import { openSftp } from './sftp.ts';
import { patternBytes } from '../../testkit/index.ts';

const MiB = 1024 * 1024;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function cryptoBindingBuilt(): boolean {
  const crypto = createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as { bindingAvailable?: boolean };
  return crypto.bindingAvailable === true;
}

// Uploads whose WRITE requests are built straight into SSH packets (direct-write.ts), checked
// byte for byte on a real OpenSSH server.
describe('SFTP write requests framed without staging copies (OpenSSH sshd)', () => {
  let server: SshServer;
  let client: Client;
  let raw: SFTPWrapper;

  beforeAll(async () => {
    server = await startSshd();
    client = new Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({
        host: server.host,
        port: server.port,
        username: server.username,
        privateKey: server.privateKey,
      });
    });
    raw = await new Promise<SFTPWrapper>((resolve, reject) =>
      client.sftp((err, s) => (err ? reject(err) : resolve(s))),
    );
  });
  afterAll(async () => {
    client?.end();
    await server?.stop();
  });

  const open = (path: string) =>
    new Promise<Buffer>((resolve, reject) => raw.open(path, 'w', (err, h) => (err ? reject(err) : resolve(h))));
  const close = (h: Buffer) =>
    new Promise<void>((resolve, reject) => raw.close(h, (err) => (err ? reject(err) : resolve())));
  const nativeWrite = (h: Buffer, data: Buffer, pos: number) =>
    new Promise<void>((resolve, reject) =>
      raw.write(h, data, 0, data.length, pos, (err) => (err ? reject(err) : resolve())),
    );

  it('keeps every byte in order while ssh2 has its own writes queued on the same channel', async () => {
    const a = patternBytes(6 * MiB, 1);
    const b = patternBytes(3 * MiB + 77, 2);
    const ha = await open(join(server.dir, 'queued-a.bin'));
    const hb = await open(join(server.dir, 'queued-b.bin'));
    const before = { ...directWriteCounts };
    // ssh2's own path: 6 MiB in requests of 256 KiB, far past the channel's 2 MiB window, so most
    // of it waits in ssh2's queue while the requests below are made.
    const step = 256 * 1024;
    const native: Promise<void>[] = [];
    for (let off = 0; off < a.length; off += step) native.push(nativeWrite(ha, a.subarray(off, off + step), off));
    const mine: Promise<void>[] = [];
    for (let off = 0; off < b.length; off += step) mine.push(writeRequest(raw, hb, b.subarray(off, off + step), off));
    await Promise.all([...native, ...mine]);
    await Promise.all([close(ha), close(hb)]);
    // With ssh2's queue full, the requests went through it rather than around it.
    expect(directWriteCounts.fallback).toBeGreaterThan(before.fallback);
    expect(sha(readFileSync(join(server.dir, 'queued-a.bin')))).toBe(sha(a));
    expect(sha(readFileSync(join(server.dir, 'queued-b.bin')))).toBe(sha(b));
  });

  it('writes direct once the window allows, and encodes offsets past 4 GiB', async () => {
    const h = await open(join(server.dir, 'far.bin'));
    const far = 5 * 1024 * MiB + 12345; // a sparse file: only the written bytes take space
    const data = patternBytes(200 * 1024, 3);
    const inFlight = new Set<Promise<void>>();
    const before = { ...directWriteCounts };
    await untilWindow(raw, h, data.length, inFlight);
    await writeRequest(raw, h, data, far);
    await close(h);
    expect(directWriteCounts.direct).toBe(before.direct + 1);
    if (cryptoBindingBuilt()) expect(directWriteCounts.pooledPackets).toBeGreaterThan(before.pooledPackets);
    const path = join(server.dir, 'far.bin');
    expect(statSync(path).size).toBe(far + data.length);
    const back = Buffer.alloc(data.length);
    const fd = await openFile(path);
    await fd.read(back, 0, back.length, far);
    await fd.close();
    expect(back.equals(data)).toBe(true);
  });

  it('reports a refused write as the error the server gave', async () => {
    const h = await open(join(server.dir, 'ro.bin'));
    await close(h);
    // A closed handle: the server answers the request with a failure status.
    const err = await writeRequest(raw, h, patternBytes(1000, 4), 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: number }).code).toBeGreaterThan(0);
  });

  it('uploads several files at once over one shared channel, each intact, mostly without the copy', async () => {
    const p = await openSftp(
      { host: server.host, port: server.port, username: server.username, private_key: server.privateKey },
      { state: {} },
      { maxConnections: 1, maxChannels: 1 },
    );
    try {
      const files = [patternBytes(5 * MiB + 3, 10), patternBytes(4 * MiB, 11), patternBytes(2 * MiB + 999, 12)];
      const before = { ...directWriteCounts };
      await Promise.all(
        files.map((data, i) => {
          // Pieces of uneven sizes, as a network source delivers them.
          const pieces: Buffer[] = [];
          for (let off = 0, n = 1; off < data.length; off += n, n = (n * 7 + 65_521) % (300 * 1024)) {
            pieces.push(data.subarray(off, off + n));
          }
          return p.put(`/shared/f${i}.bin`, Readable.from(pieces), { size: data.length });
        }),
      );
      for (const [i, data] of files.entries()) {
        expect(sha(readFileSync(join(server.dir, 'shared', `f${i}.bin`)))).toBe(sha(data));
      }
      const direct = directWriteCounts.direct - before.direct;
      const fallback = directWriteCounts.fallback - before.fallback;
      expect(direct).toBeGreaterThan(fallback);
    } finally {
      await p.close();
    }
  });
});
