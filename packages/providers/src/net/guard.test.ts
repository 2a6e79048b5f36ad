import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../api/errors.ts';
import { parseIp } from './address.ts';
import { OutboundGuard, parseAllowList } from './guard.ts';

const ip = (s: string) => parseIp(s)!;

describe('OutboundGuard', () => {
  it('refuses special addresses by default and lets public ones through', () => {
    const g = new OutboundGuard();
    for (const a of ['127.0.0.1', '10.0.0.1', '::1', '::ffff:127.0.0.1', '169.254.169.254', '100.64.1.1', '0.0.0.0'])
      expect(g.allows(ip(a)), a).toBe(false);
    for (const a of ['8.8.8.8', '2606:4700:4700::1111']) expect(g.allows(ip(a)), a).toBe(true);
  });

  it('lets the allowed networks through, and no other', () => {
    const g = new OutboundGuard(parseAllowList('192.168.1.0/24, fd00::/8'));
    expect(g.allows(ip('192.168.1.20'))).toBe(true);
    expect(g.allows(ip('::ffff:192.168.1.20'))).toBe(true);
    expect(g.allows(ip('fd00::5'))).toBe(true);
    expect(g.allows(ip('192.168.2.20'))).toBe(false);
    expect(g.allows(ip('127.0.0.1'))).toBe(false);
    expect(g.allows(ip('10.0.0.1'))).toBe(false);
    expect(new OutboundGuard(parseAllowList('true')).allows(ip('127.0.0.1'))).toBe(true);
  });

  it('reads the operator allow-list, naming a bad entry', () => {
    expect(parseAllowList('TRUE')).toBe(true);
    expect(parseAllowList('')).toEqual([]);
    expect(parseAllowList('10.0.0.0/8,,192.168.0.1')).toHaveLength(2);
    expect(() => parseAllowList('10.0.0.0/8, nas.local')).toThrow(/nas\.local/);
  });

  it('checks IP literals in every spelling, names after DNS resolution', async () => {
    const g = new OutboundGuard();
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '0177.0.0.1', '[::1]', '::ffff:127.0.0.1', '127.1']) {
      expect(() => g.checkHost(host), host).toThrow(ProviderError);
      await expect(g.resolveAll(host), host).rejects.toMatchObject({ code: 'address_not_allowed' });
    }
    // A name is judged by what it resolves to.
    expect(() => g.checkHost('localhost')).not.toThrow();
    await expect(g.resolveAll('localhost')).rejects.toMatchObject({ code: 'address_not_allowed' });
    const allowed = new OutboundGuard(parseAllowList('127.0.0.0/8, ::1'));
    expect((await allowed.resolveAll('2130706433'))[0]).toEqual({ address: '127.0.0.1', family: 4 });
  });

  describe('connections', () => {
    let server: Server;
    let port = 0;
    let accepted = 0;
    const open = new Set<Socket>();

    beforeAll(async () => {
      server = createServer((s) => {
        accepted += 1;
        open.add(s);
        s.on('close', () => open.delete(s));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => server.close(r));
    });

    const tryConnect = (g: OutboundGuard, host: string) =>
      new Promise<void>((resolve, reject) => {
        let s: Socket;
        try {
          s = connect({ port, ...g.connectTarget(host) });
        } catch (err) {
          reject(err as Error);
          return;
        }
        s.once('connect', () => {
          s.destroy();
          resolve();
        });
        s.once('error', reject);
      });

    it('refuses before connecting, whatever the spelling; the allowed network connects', async () => {
      const before = accepted;
      const g = new OutboundGuard();
      for (const host of ['localhost', '127.0.0.1', '2130706433', '0x7f000001'])
        await expect(tryConnect(g, host), host).rejects.toMatchObject({ code: 'address_not_allowed' });
      expect(accepted).toBe(before);
      await tryConnect(new OutboundGuard(parseAllowList('127.0.0.0/8, ::1')), 'localhost');
      await tryConnect(new OutboundGuard(parseAllowList('127.0.0.1/32')), '2130706433');
      expect(accepted).toBe(before + 2);
    });
  });
});
