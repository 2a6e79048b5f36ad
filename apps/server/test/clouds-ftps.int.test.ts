import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud } from '@skyferry/contract';
import { startVsftpd, type FtpServer } from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';

/**
 * Connecting FTPS (vsftpd with explicit TLS and a self-signed certificate) through POST /api/clouds
 * with the form's optional settings: the certificate pinned by its SHA-256 fingerprint, a wrong or
 * missing pin refused with a message saying why, the unsafe switch, and the remote folder.
 */
describe('connecting FTPS with a pinned certificate', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let ftps: FtpServer;

  const connect = async (credentials: Record<string, unknown>) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/clouds',
      headers: u.headers,
      payload: { cloud_name: 'ftp', credentials },
    });
    return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: Cloud }) };
  };
  const login = () => ({
    host: ftps.host,
    port: ftps.port,
    username: ftps.username,
    password: ftps.password,
    secure: true,
  });

  beforeAll(async () => {
    [t, ftps] = await Promise.all([startTestApp(), startVsftpd({ tls: true })]);
    u = await t.signUp();
  }, 120_000);
  afterAll(async () => {
    await Promise.all([t?.close(), ftps?.stop()]);
  });

  it('refuses a wrong fingerprint before sending the password, naming the certificate the server presented', async () => {
    const res = await connect({ ...login(), root: ftps.root, tls_fingerprint: 'AB'.repeat(32) });
    expect([res.status, res.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
    expect(res.msg).toBe(
      `The server ${ftps.host} presented a TLS certificate with the SHA-256 fingerprint ${ftps.certFingerprint256}, not the one entered. The password was not sent.`,
    );
  });

  it('refuses the self-signed certificate without a pin, saying to enter its fingerprint', async () => {
    const res = await connect({ ...login(), root: ftps.root });
    expect([res.status, res.code]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID]);
    expect(res.msg).toBe(
      `The server ${ftps.host} presented a TLS certificate that is not trusted (self-signed?). Enter its SHA-256 fingerprint to trust it.`,
    );
  });

  it('refuses a fingerprint that is not one, without contacting the server', async () => {
    const res = await connect({ ...login(), tls_fingerprint: 'not-a-fingerprint' });
    expect(res.status).toBe(400);
    expect(res.msg).toContain('Certificate fingerprint (SHA-256)');
  });

  it('connects with the right fingerprint, in the remote folder given as root', async () => {
    const res = await connect({ ...login(), root: ftps.root, tls_fingerprint: ftps.certFingerprint256 });
    expect(res.code, res.msg).toBe(0);
    expect(res.data.cloud_account).toBe(`${ftps.username}@${ftps.host}:${ftps.port} ${ftps.root}`);
    const { provider } = await t.ctx.clouds.open({ kind: 'user', userId: u.uid }, res.data.id);
    try {
      const data = Buffer.from('pinned and encrypted');
      await provider.put('/hello.txt', Readable.from([data]), { size: data.length });
      // "/" of the cloud is the root folder: the file is in the server's folder behind it.
      expect(readFileSync(join(ftps.dir, 'hello.txt')).equals(data)).toBe(true);
      expect((await provider.list('/')).entries.map((e) => e.name)).toContain('hello.txt');
    } finally {
      await provider.close?.();
    }
  });

  it('connects with the unsafe switch and no pin; another remote folder is another cloud', async () => {
    const res = await connect({ ...login(), root: '/', insecure_skip_verify: true });
    expect(res.code, res.msg).toBe(0);
    expect(res.data.cloud_account).toBe(`${ftps.username}@${ftps.host}:${ftps.port} /`);
    const { provider } = await t.ctx.clouds.open({ kind: 'user', userId: u.uid }, res.data.id);
    try {
      expect((await provider.list('/')).entries.map((e) => e.name)).toContain(ftps.root.replace(/^\//, ''));
    } finally {
      await provider.close?.();
    }
    // The same login and folder again is the same cloud.
    const again = await connect({ ...login(), root: '/', insecure_skip_verify: true });
    expect(again.code).toBe(Code.CLOUD_ALREADY_BOUND);
  });
});
