import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { startHostilePeer, startSshd, type HostileMode, type HostilePeer } from '@skyferry/testing';
import { ProviderError } from '../api/errors.ts';
import type { ProviderContext } from '../api/registry.ts';
import type { Provider } from '../api/types.ts';
import { openFtp } from './ftp/ftp.ts';
import { openS3 } from './s3/s3.ts';
import { openSftp } from './sftp/sftp.ts';
import { openWebdav } from './webdav/webdav.ts';

/**
 * Every backend reached by address, opened against peers that accept and then misbehave (see
 * packages/testing/src/hostile-peers.ts): each open fails with a ProviderError in bounded time,
 * and nothing is left behind that fails later with nobody listening (vitest fails the run on an
 * uncaught error, which an ssh2 client without a listener used to raise after its timeout).
 */
const TIMEOUT_MS = 800;
const ctx: ProviderContext = { timeoutMs: TIMEOUT_MS };

type Open = (peer: HostilePeer) => Promise<Provider>;
const kinds: Record<string, Open> = {
  sftp: (p) => openSftp({ host: p.host, port: p.port, username: 'u', password: 'p' }, ctx),
  ftp: (p) => openFtp({ host: p.host, port: p.port, username: 'u', password: 'p' }, ctx),
  ftps: (p) => openFtp({ host: p.host, port: p.port, username: 'u', password: 'p', secure: true }, ctx),
  webdav: (p) => openWebdav({ url: `http://${p.host}:${p.port}/dav/`, username: 'u', password: 'p' }, ctx),
  s3: async (p) => {
    const s3 = await openS3(
      's3_compatible',
      { endpoint: `http://${p.host}:${p.port}`, bucket: 'b', access_key_id: 'k', secret_access_key: 's' },
      ctx,
    );
    await s3.list('/');
    return s3;
  },
};

/** What each protocol's server says first, for a peer that closes right after. */
const GREETINGS: Record<string, string> = {
  sftp: 'SSH-2.0-OpenSSH_9.2p1\r\n',
  ftp: '220-hello\r\n',
  ftps: '220 ready\r\n',
  webdav: '',
  s3: '',
};

describe('backends against hostile peers', () => {
  const peers: HostilePeer[] = [];
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.stop()));
  });

  const modes: HostileMode[] = ['tarpit', 'close-mid-handshake', 'garbage'];
  for (const mode of modes) {
    it(`every kind fails cleanly against a ${mode} peer`, async () => {
      const results = await Promise.all(
        Object.entries(kinds).map(async ([kind, open]) => {
          const peer = await startHostilePeer({ mode, greeting: GREETINGS[kind] });
          peers.push(peer);
          const started = Date.now();
          const err = await open(peer).then(
            async (p) => {
              await p.close?.();
              return new Error(`${kind} opened`);
            },
            (e: unknown) => e,
          );
          return { kind, err, ms: Date.now() - started, accepted: peer.accepted };
        }),
      );
      for (const r of results) {
        expect(r.err, r.kind).toBeInstanceOf(ProviderError);
        expect((r.err as ProviderError).code, `${r.kind}: ${(r.err as Error).message}`).toBe('network');
        // Retried by the pacer where the backend retries network errors: still bounded.
        expect(r.ms, r.kind).toBeLessThan(30_000);
        expect(r.accepted, r.kind).toBeGreaterThan(0);
      }
      // Late errors (a second report of the same lost connection) would surface here.
      await new Promise((r) => setTimeout(r, 2 * TIMEOUT_MS));
    }, 60_000);
  }

  it('SFTP calls racing a dropped connection all settle (ssh2 leaves requests on a closed channel unanswered)', async () => {
    const ssh = await startSshd();
    try {
      for (const mode of ['close-mid-handshake', 'half-open'] as const) {
        const peer = await startHostilePeer({ mode: 'pass', target: { host: ssh.host, port: ssh.port } });
        peers.push(peer);
        const login = { host: peer.host, port: peer.port, username: ssh.username, private_key: ssh.privateKey };
        const sftp = await openSftp(login, ctx);
        const MiB = Buffer.alloc(1024 * 1024, 1);
        await sftp.put(`/${mode}.bin`, Readable.from([MiB]), { size: MiB.length });
        peer.setMode(mode);
        const started = Date.now();
        const settled = await Promise.allSettled([
          sftp.list('/'),
          sftp.put(`/${mode}-2.bin`, Readable.from([MiB]), { size: MiB.length }),
          sftp.openRead(`/${mode}.bin`).then(async (s) => {
            for await (const chunk of s) void chunk;
          }),
        ]);
        // A half-open peer lets a short listing through; everything else fails, as a network error.
        for (const [i, r] of settled.entries()) {
          if (r.status === 'fulfilled') expect([mode, i]).toEqual(['half-open', 0]);
          else expect((r.reason as ProviderError).code, `${mode} call ${i}`).toBe('network');
        }
        expect(Date.now() - started, mode).toBeLessThan(30_000);
        await sftp.close?.();
      }
    } finally {
      await ssh.stop();
    }
  }, 90_000);
});
