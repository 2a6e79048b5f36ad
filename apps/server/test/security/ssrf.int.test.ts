import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, message, type Cloud } from '@skyferry/contract';
import { startFtpSrv, startHostilePeer, type HostilePeer } from '@skyferry/testing';
import { startTestApp, type TestApp } from '../support/app.ts';
import {
  ADDRESS_KINDS,
  startProtocolServers,
  type AddressKind,
  type ProtocolServers,
} from './support/protocol-servers.ts';

/**
 * Issue 34, finding 3 (server-side request forgery): clouds reached by an address the user gives
 * (WebDAV, S3-compatible, SFTP, FTP, FTPS) go through one outbound-connection guard. On the
 * defaults it refuses loopback and the other private and reserved networks in every spelling and
 * after DNS resolution, before any connection, with one message whatever is (or is not) listening
 * there; SKYFERRY_ALLOW_PRIVATE_NETWORKS lets the operator's networks through, and no other.
 * The real servers behind the peers below would accept these connections: each peer counts them.
 */

const REFUSED = message('en', 'cloud_address_not_allowed');

/** A small internal HTTP service (think a router's admin page or a metadata endpoint) that answers WebDAV. */
interface Internal {
  port: number;
  requests: number;
  server: Server;
}
async function startInternal(): Promise<Internal> {
  const svc: Internal = { port: 0, requests: 0, server: createServer() };
  svc.server.on('request', (req, res) => {
    svc.requests += 1;
    if (req.method === 'PROPFIND') {
      res.writeHead(207, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/</d:href><d:propstat><d:prop>' +
          '<d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>' +
          '</d:response></d:multistatus>',
      );
    } else res.end('internal secret');
  });
  await new Promise<void>((r) => svc.server.listen(0, '127.0.0.1', r));
  svc.port = (svc.server.address() as { port: number }).port;
  return svc;
}

describe('security: the outbound-connection guard (SSRF)', () => {
  let deny: TestApp;
  let lan: TestApp;
  let servers: ProtocolServers;
  let internal: Internal;
  const peers: Record<string, HostilePeer> = {};
  const target = (kind: AddressKind, host: string, port: number) => servers.connect(kind, host, port);

  beforeAll(async () => {
    // Default: SKYFERRY_ALLOW_PRIVATE_NETWORKS unset (an empty value counts as unset).
    [deny, lan, servers, internal] = await Promise.all([
      startTestApp({ env: { SKYFERRY_ALLOW_PRIVATE_NETWORKS: '' } }),
      startTestApp({ env: { SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' } }),
      startProtocolServers(),
      startInternal(),
    ]);
    // A peer that passes traffic on to each real server, counting the connections made to it.
    for (const kind of ADDRESS_KINDS)
      peers[kind] = await startHostilePeer({ mode: 'pass', target: servers.behind[kind] });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([
      deny?.close(),
      lan?.close(),
      servers?.stop(),
      ...Object.values(peers).map((p) => p.stop()),
      new Promise((r) => internal?.server.close(r)),
    ]);
  });

  const connect = async (t: TestApp, headers: Record<string, string>, body: unknown) => {
    const started = Date.now();
    const res = await t.app.inject({ method: 'POST', url: '/api/clouds', headers, payload: body as object });
    const env = JSON.parse(res.body) as { code: number; msg: string; data: Cloud };
    return { status: res.statusCode, code: env.code, msg: env.msg, data: env.data, ms: Date.now() - started };
  };

  // Loopback as an address, as a decimal number, as a name that resolves to it, as IPv4-mapped IPv6.
  const SPELLINGS = ['127.0.0.1', '2130706433', 'localhost', '::ffff:127.0.0.1'];

  it.each(ADDRESS_KINDS)(
    '%s: an anonymous visitor cannot reach loopback in any spelling; nothing is contacted',
    async (kind) => {
      const visitor = await deny.visitor();
      const peer = peers[kind]!;
      for (const host of SPELLINGS) {
        const res = await connect(deny, visitor.headers, target(kind, host, peer.port));
        expect([res.status, res.code, res.msg], `${kind} at ${host}`).toEqual([
          422,
          Code.CLOUD_CREDENTIALS_INVALID,
          REFUSED,
        ]);
      }
      expect(peer.accepted, `connections made to the ${kind} server`).toBe(0);
    },
  );

  it("refuses the other private and reserved networks too, in the caller's language", async () => {
    const user = await deny.signUp();
    for (const host of [
      '10.0.0.1',
      '192.168.1.10',
      '172.16.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      'fd00::1',
    ]) {
      const res = await connect(deny, user.headers, target('sftp', host, 22));
      expect([res.status, res.code, res.msg], host).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID, REFUSED]);
    }
    const de = await connect(deny, { ...user.headers, 'x-language': 'de' }, target('webdav', '::1', 80));
    expect([de.status, de.msg]).toEqual([422, message('de', 'cloud_address_not_allowed')]);
  });

  it('an anonymous visitor cannot read an internal HTTP service through the file API', async () => {
    const visitor = await deny.visitor();
    const res = await connect(deny, visitor.headers, target('webdav', '127.0.0.1', internal.port));
    expect([res.status, res.msg]).toEqual([422, REFUSED]);
    expect(internal.requests).toBe(0);
  });

  it('answers an open port and a closed one with the same words, at once', async () => {
    const user = await deny.signUp();
    const tarpit = await startHostilePeer({ mode: 'tarpit' });
    const closed = await startHostilePeer({ mode: 'tarpit' });
    const closedPort = closed.port;
    await closed.stop();
    try {
      for (const kind of ADDRESS_KINDS) {
        const open = await connect(deny, user.headers, target(kind, '127.0.0.1', tarpit.port));
        const shut = await connect(deny, user.headers, target(kind, '127.0.0.1', closedPort));
        expect([open.status, open.code, open.msg], kind).toEqual([shut.status, shut.code, shut.msg]);
        expect(open.msg).toBe(REFUSED);
        // Refused before connecting: neither waits for the network.
        expect(Math.max(open.ms, shut.ms), kind).toBeLessThan(1000);
      }
      expect(tarpit.accepted).toBe(0);
    } finally {
      await tarpit.stop();
    }
  });

  it('lets the allowed network through, and no other', async () => {
    const user = await lan.signUp();
    // 127.0.0.1/32 is allowed: by address, as a number, and by a name that resolves to it.
    for (const host of ['127.0.0.1', '2130706433']) {
      const res = await connect(lan, user.headers, target('sftp', host, peers.sftp!.port));
      expect(res.code, `sftp at ${host}: ${res.msg}`).toBe(0);
    }
    const named = await connect(lan, user.headers, target('webdav', 'localhost', peers.webdav!.port));
    expect(named.code, named.msg).toBe(0);
    const before = Object.values(peers).reduce((n, p) => n + p.accepted, 0);
    // Other loopback addresses, IPv6 loopback, and private networks stay refused.
    for (const host of ['127.0.0.2', '::1', '10.0.0.1', '192.168.0.1']) {
      for (const kind of ADDRESS_KINDS) {
        const res = await connect(lan, user.headers, target(kind, host, peers[kind]!.port));
        expect([res.status, res.msg], `${kind} at ${host}`).toEqual([422, REFUSED]);
      }
    }
    expect(Object.values(peers).reduce((n, p) => n + p.accepted, 0)).toBe(before);
  });

  it('never follows an HTTP redirect from an allowed server (to loopback or anywhere)', async () => {
    const user = await lan.signUp();
    let redirected = 0;
    const redirector = createServer((req, res) => {
      redirected += 1;
      res.writeHead(req.method === 'PROPFIND' ? 301 : 307, { location: `http://127.0.0.1:${internal.port}/` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const port = (redirector.address() as { port: number }).port;
    const before = internal.requests;
    try {
      for (const kind of ['webdav', 's3'] as const) {
        const res = await connect(lan, user.headers, target(kind, '127.0.0.1', port));
        expect(res.code, kind).not.toBe(0);
        expect(res.status, `${kind}: ${res.msg}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${kind}: ${res.msg}`).toBeLessThan(500);
      }
      expect(redirected).toBeGreaterThan(0);
      expect(internal.requests - before).toBe(0);
    } finally {
      await new Promise((r) => redirector.close(r));
    }
  });

  it('does not follow a PASV answer that names another (private) host: data goes to the control connection', async () => {
    const liar = await startFtpSrv({ pasvAddress: '10.1.2.3', refuseEpsv: true });
    try {
      const user = await lan.signUp();
      const res = await connect(lan, user.headers, {
        cloud_name: 'ftp',
        credentials: { host: liar.host, port: liar.port, username: liar.username, password: liar.password },
      });
      expect(res.code, res.msg).toBe(0);
      const id = res.data.id;
      const put = await lan.app.inject({
        method: 'PUT',
        url: `/api/cloud-manager/files?cloud_id=${id}&path=${encodeURIComponent('/hello.txt')}`,
        headers: { ...user.headers, 'content-type': 'application/octet-stream' },
        payload: Buffer.from('through the control address'),
      });
      expect(JSON.parse(put.body).code, put.body).toBe(0);
      const got = await lan.app.inject({
        method: 'GET',
        url: `/api/cloud-manager/files?cloud_id=${id}&path=${encodeURIComponent('/hello.txt')}`,
        headers: user.headers,
      });
      expect([got.statusCode, got.body]).toEqual([200, 'through the control address']);
    } finally {
      await liar.stop();
    }
  });
});
