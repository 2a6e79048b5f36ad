import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CloudsMeData } from '@skyferry/contract';
import { ProviderError } from '@skyferry/providers';
import { startS3rver, startSshd, type S3rverServer, type SshServer } from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';

/** Connecting real object-storage and SFTP servers: verification, the spec's messages, host keys. */
describe('connecting real servers', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let s3: S3rverServer;
  let ssh: SshServer;

  const connect = async (body: unknown) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/clouds', headers: u.headers, payload: body as object });
    return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: Cloud }) };
  };

  beforeAll(async () => {
    [t, s3, ssh] = await Promise.all([startTestApp(), startS3rver({ buckets: ['photos'] }), startSshd()]);
    u = await t.signUp();
  });
  afterAll(async () => {
    await Promise.all([t?.close(), s3?.stop(), ssh?.stop()]);
  });

  const s3creds = () => ({
    bucket: 'photos',
    access_key_id: s3.accessKeyId,
    secret_access_key: s3.secretAccessKey,
    endpoint: s3.endpoint,
    region: s3.region,
    path_style: true,
  });

  it('S3-compatible: a wrong key or bucket gives "Your Bucket Name, ID or key is incorrect"', async () => {
    const message = 'Your Bucket Name, ID or key is incorrect, please try again';
    // (s3rver checks the access key but not the signature, so a wrong secret cannot be shown here;
    // the backend maps SignatureDoesNotMatch to the same auth_invalid as InvalidAccessKeyId.)
    for (const wrong of [{ access_key_id: 'NOT-THE-KEY' }, { bucket: 'no-such-bucket' }]) {
      const res = await connect({ cloud_name: 's3_compatible', credentials: { ...s3creds(), ...wrong } });
      expect([res.status, res.code, res.msg]).toEqual([422, Code.CLOUD_CREDENTIALS_INVALID, message]);
    }
    const unreachable = await connect({
      cloud_name: 's3_compatible',
      credentials: { ...s3creds(), endpoint: 'http://127.0.0.1:9' },
    });
    expect(unreachable.code).toBe(Code.CLOUD_UNAVAILABLE);
  });

  it('S3-compatible: the right credentials connect, and the cloud opens for transfers', async () => {
    const res = await connect({ cloud_name: 's3_compatible', alias: 'Bucket', credentials: s3creds() });
    expect(res.code).toBe(0);
    expect(res.data.cloud_account).toBe(`photos @ ${new URL(s3.endpoint).host}`);
    const { provider } = await t.ctx.clouds.open({ kind: 'user', userId: u.uid }, res.data.id);
    await provider.mkdir('/2024');
    expect((await provider.list('/')).entries.map((e) => e.name)).toEqual(['2024']);
    await provider.close?.();
  });

  it('SFTP: records the host key (encrypted) at connect; a changed key is refused', async () => {
    const creds = { host: ssh.host, port: ssh.port, username: ssh.username, private_key: ssh.privateKey };
    const res = await connect({ cloud_name: 'sftp', credentials: creds });
    expect(res.code).toBe(0);
    expect(res.data.cloud_account).toBe(`${ssh.username}@${ssh.host}:${ssh.port}`);
    const row = await t.ctx.db.kysely
      .selectFrom('clouds')
      .select(['state_enc', 'credentials_enc'])
      .where('id', '=', res.data.id)
      .executeTakeFirstOrThrow();
    expect(row.state_enc).toMatch(/^v1\./);
    expect(row.state_enc).not.toContain('SHA256');
    const keyBody = ssh.privateKey.split('\n')[1] ?? '';
    expect(keyBody.length).toBeGreaterThan(20);
    const files = readdirSync(t.dataDir).filter((f) => f.startsWith('skyferry.db'));
    for (const f of files) expect(readFileSync(join(t.dataDir, f)).toString('latin1')).not.toContain(keyBody);

    const identity = { kind: 'user' as const, userId: u.uid };
    const first = await t.ctx.clouds.open(identity, res.data.id);
    expect((await first.provider.list('/')).entries).toBeDefined();
    await first.provider.close?.();

    await ssh.rotateHostKey();
    const err = await t.ctx.clouds.open(identity, res.data.id).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'host_key_changed')).toBe(true);
    const re = await t.app.inject({
      method: 'PUT',
      url: `/api/clouds/${res.data.id}/credentials`,
      headers: u.headers,
      payload: { credentials: creds },
    });
    const body = JSON.parse(re.body) as { code: number; msg: string };
    expect(body.code).toBe(Code.CLOUD_CREDENTIALS_INVALID);
    expect(body.msg).toContain('presented a different host key');
    const listed = JSON.parse(
      (await t.app.inject({ method: 'GET', url: '/api/v2/clouds/me', headers: u.headers })).body,
    ) as { data: CloudsMeData };
    expect(listed.data.clouds.map((c) => c.cloud_name)).toEqual(['s3_compatible', 'sftp']);
  });
});
