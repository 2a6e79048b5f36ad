import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cloud } from '@skyferry/contract';
import { HOSTILE_MODES, startHostilePeer, type HostileMode, type HostilePeer } from '@skyferry/testing';
import { startSkyferry, type RunningSkyferry } from '../../../../e2e/support/server.ts';
import { FileClient } from '../support/files.ts';
import {
  ADDRESS_KINDS,
  startProtocolServers,
  type AddressKind,
  type ProtocolServers,
} from './support/protocol-servers.ts';

/**
 * Issue 34, finding 2: one request took the whole server down (an SFTP connect to a port that
 * accepts TCP but never speaks SSH). Here a real Skyferry process (the server's own main.ts, as a
 * child process) connects each kind reached by address (SFTP, FTP, FTPS, WebDAV, S3-compatible)
 * to peers that misbehave (packages/testing/src/hostile-peers.ts): first peers hostile from the
 * start, then peers in front of real servers that turn hostile after the cloud was connected,
 * while it lists, uploads and downloads. Every call must end in bounded time with an error
 * envelope that is no 5xx, and the process must stay up and answer /healthz after each.
 */

const SILENCE_MS = 1500;
/** A call retried by the account's pacer (7 attempts, backoff up to 6.3 s) still ends by then. */
const BOUND_MS = 40_000;
const FILE = Buffer.alloc(1024 * 1024, 7);

interface Outcome {
  status: number;
  code: number;
  msg: string;
  ms: number;
}

describe('security: hostile peers cannot take the server down', () => {
  let server: RunningSkyferry;
  let exited: number | string | null = null;
  let servers: ProtocolServers;
  const peers: HostilePeer[] = [];
  const credentials = (kind: AddressKind, peer: HostilePeer) => servers.connect(kind, peer.host, peer.port);

  const visitorHeaders = async (): Promise<Record<string, string>> => {
    const res = await fetch(`${server.url}/api/token`);
    const body = (await res.json()) as { data: { access_token: string } };
    return { 'x-temp-authorization': body.data.access_token };
  };

  /** Runs one call, timing it; a call whose connection broke counts as status 0. */
  const timed = async (call: () => Promise<{ status: number; code: number; msg: string }>): Promise<Outcome> => {
    const started = Date.now();
    const r = await call().catch((err: unknown) => ({ status: 0, code: -1, msg: String(err) }));
    return { ...r, ms: Date.now() - started };
  };

  const expectCleanError = (what: string, r: Outcome) => {
    expect(r.status, `${what}: ${r.msg}`).toBeGreaterThanOrEqual(400);
    expect(r.status, `${what}: ${r.msg}`).toBeLessThan(500);
    expect(r.code, what).not.toBe(0);
    expect(r.msg.length, what).toBeGreaterThan(0);
    expect(r.ms, what).toBeLessThan(BOUND_MS);
  };

  const expectAlive = async (what: string) => {
    expect(exited, `the server exited after ${what}:\n${server.logs().slice(-3000)}`).toBeNull();
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status, what).toBe(200);
  };

  beforeAll(async () => {
    [server, servers] = await Promise.all([
      startSkyferry({
        SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
        SKYFERRY_CLOUD_TIMEOUT_MS: String(SILENCE_MS),
        SKYFERRY_WORKERS: '0',
        SKYFERRY_LOCAL_ROOTS: '',
      }),
      startProtocolServers(),
    ]);
    server.child.on('exit', (code, signal) => (exited = code ?? signal));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(peers.map((p) => p.stop()));
    await Promise.all([server?.stop(), servers?.stop()]);
  });

  it('connecting to a peer that is hostile from the start fails cleanly', async () => {
    const headers = await visitorHeaders();
    const connectModes: HostileMode[] = ['tarpit', 'close-mid-handshake', 'garbage'];
    const runs = ADDRESS_KINDS.flatMap((kind) =>
      connectModes.map(async (mode) => {
        const peer = await startHostilePeer({ mode, target: servers.behind[kind] });
        peers.push(peer);
        const r = await timed(async () => {
          const res = await fetch(`${server.url}/api/clouds`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(credentials(kind, peer)),
          });
          return { status: res.status, ...((await res.json()) as { code: number; msg: string }) };
        });
        const what = `connect ${kind} to a ${mode} peer`;
        await expectAlive(what);
        return { what, r, accepted: peer.accepted };
      }),
    );
    for (const { what, r, accepted } of await Promise.all(runs)) {
      expectCleanError(what, r);
      expect(accepted, what).toBeGreaterThan(0);
    }
    await expectAlive('hostile connects');
  }, 90_000);

  it('a connected cloud whose server turns hostile fails each list, upload and download cleanly', async () => {
    // One cloud per kind and mode, connected and given a file while its peer still passes traffic.
    const clouds = await Promise.all(
      ADDRESS_KINDS.map(async (kind) => {
        const headers = await visitorHeaders();
        const client = new FileClient(server.url, headers);
        return Promise.all(
          HOSTILE_MODES.map(async (mode) => {
            // FTP's data connections go straight to the server (to the control connection's
            // address, on the port it names): a half-open peer stops its control connection at once.
            const halfOpenAfter = kind === 'ftp' || kind === 'ftps' ? 0 : 64 * 1024;
            const peer = await startHostilePeer({ mode: 'pass', target: servers.behind[kind], halfOpenAfter });
            peers.push(peer);
            const body = { alias: `${kind} ${mode}`, ...credentials(kind, peer) };
            const res = await client.call<Cloud>('POST', '/api/clouds', body);
            if (res.code !== 0) throw new Error(`connecting ${kind} through a passing peer: ${res.msg}`);
            const file = `/${mode}-${kind}.bin`;
            const put = await client.put(res.data.id, file, FILE);
            if (put.code !== 0) throw new Error(`uploading to ${kind}: ${put.msg}`);
            return { kind, mode, peer, client, id: res.data.id, file };
          }),
        );
      }),
    );
    for (const c of clouds.flat()) c.peer.setMode(c.mode);

    const runs = clouds.flat().map(async ({ kind, mode, client, id, file }) => {
      const [list, upload, download] = await Promise.all([
        timed(() => client.call('POST', '/api/cloud-manager/list', { cloud_id: id, path: '/', refresh: true })),
        timed(() => client.put(id, `/new-${mode}-${kind}.bin`, FILE)),
        timed(async () => {
          const res = await client.get(id, file);
          if (res.status === 200) {
            // The head went out before the peer stopped (half-open mid-body): the body must end short.
            const got = await res.arrayBuffer().then(
              (b) => b.byteLength,
              () => -1,
            );
            return { status: got === FILE.length ? 200 : 499, code: got === FILE.length ? 0 : -2, msg: `body ${got}` };
          }
          return { status: res.status, ...((await res.json()) as { code: number; msg: string }) };
        }),
      ]);
      await expectAlive(`${kind} behind a ${mode} peer`);
      return { kind, mode, list, upload, download };
    });
    for (const { kind, mode, list, upload, download } of await Promise.all(runs)) {
      // A half-open peer stops only once a transfer is under way: a short listing may still pass.
      if (!(mode === 'half-open' && list.code === 0)) expectCleanError(`list ${kind} behind a ${mode} peer`, list);
      expectCleanError(`upload to ${kind} behind a ${mode} peer`, upload);
      if (download.status === 499) {
        // Cut mid-body after a 200 head: no envelope can follow a head, the connection ends instead.
        expect(mode, `download from ${kind}: ${download.msg}`).toBe('half-open');
        expect(download.ms).toBeLessThan(BOUND_MS);
      } else expectCleanError(`download from ${kind} behind a ${mode} peer`, download);
    }
    await expectAlive('hostile clouds');
  }, 120_000);

  it('then stops at once: no call left a connection or a request hanging', async () => {
    await expectAlive('everything');
    const started = Date.now();
    await server.stop();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(exited).toBe(0);
  });
});
