import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CloudsMeData, type Envelope } from '@skyferry/contract';
import {
  startApacheWebdav,
  startFtpSrv,
  startS3rver,
  startSshd,
  type S3rverServer,
  type SshServer,
  type ApacheWebdavServer,
} from '@skyferry/testing';
import type { App } from '../../src/http/app-types.ts';
import { createTestContext, type TestContext } from '../support/context.ts';

/**
 * A cloud whose credentials the server stopped accepting (a password changed on a WebDAV or FTP
 * server, a key taken back on an SFTP server, an S3 key that is no longer valid) answers 401 "reauthorize"
 * with the cloud marked expired, also when a restarted server opens it fresh, for file calls and for
 * new tasks alike; reauthorising with the new credentials brings it back.
 */

interface Protocol {
  name: string;
  kind: string;
  credentials: Record<string, unknown>;
  /** Makes the server refuse `credentials` from now on; answers credentials it accepts. */
  change(
    stored: (cloudId: string, credentials: Record<string, unknown>) => Promise<void>,
    cloudIds: string[],
  ): Promise<Record<string, unknown>>;
}

// Loopback servers: the outbound guard lets them through only when the operator allows private networks.
const ENV = { SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' };
const EXPIRED_MSG = 'Authorization has expired, please reauthorize.';

describe('clouds whose credentials changed on the server', () => {
  let before: TestContext;
  let after: TestContext;
  let appBefore: App;
  let appAfter: App;
  let dav: ApacheWebdavServer;
  let ssh: SshServer;
  let ftp: Awaited<ReturnType<typeof startFtpSrv>>;
  let s3: S3rverServer;
  const protocols: Protocol[] = [];

  const call = async <T>(
    app: App,
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ) => {
    const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, ...(JSON.parse(res.body) as Envelope<T>) };
  };

  const signUp = async (app: App) => {
    const email = `u${Math.random().toString(36).slice(2)}@example.com`;
    const res = await call<{ access_token: string }>(
      app,
      'POST',
      '/api/account/signup',
      {},
      { email, password: 'correct horse battery staple' },
    );
    return { authorization: `Bearer ${res.data.access_token}` };
  };

  beforeAll(async () => {
    [dav, ssh, ftp, s3] = await Promise.all([
      startApacheWebdav(),
      startSshd(),
      startFtpSrv(),
      startS3rver({ buckets: ['files'] }),
    ]);
    protocols.push(
      {
        name: 'WebDAV (Apache), password changed',
        kind: 'webdav',
        credentials: { url: dav.url, username: dav.username, password: dav.password },
        change: async () => {
          dav.changePassword(`${dav.password}-new`);
          return { url: dav.url, username: dav.username, password: `${dav.password}-new` };
        },
      },
      {
        name: 'SFTP (OpenSSH), key taken back',
        kind: 'sftp',
        credentials: { host: ssh.host, port: ssh.port, username: ssh.username, private_key: ssh.privateKey },
        change: async () => {
          ssh.revokeClientKeys();
          // Reauthorised below with the same key once the server takes it again.
          return { host: ssh.host, port: ssh.port, username: ssh.username, private_key: ssh.privateKey };
        },
      },
      {
        name: 'FTP (ftp-srv), password changed',
        kind: 'ftp',
        credentials: { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, root: ftp.root },
        change: async () => {
          ftp.changePassword(`${ftp.password}-new`);
          return {
            host: ftp.host,
            port: ftp.port,
            username: ftp.username,
            password: `${ftp.password}-new`,
            root: ftp.root,
          };
        },
      },
      {
        // s3rver knows one fixed key: the stored key is the one that stops being valid.
        name: 'S3 (s3rver), key no longer valid',
        kind: 's3_compatible',
        credentials: {
          bucket: 'files',
          access_key_id: s3.accessKeyId,
          secret_access_key: s3.secretAccessKey,
          endpoint: s3.endpoint,
          region: s3.region,
          path_style: true,
        },
        change: async (stored, cloudIds) => {
          const good = protocols.find((p) => p.kind === 's3_compatible')!.credentials;
          for (const id of cloudIds) await stored(id, { ...good, access_key_id: 'REVOKED-KEY' });
          return good;
        },
      },
    );
    before = await createTestContext({ env: ENV });
    appBefore = await before.buildApp();
    await appBefore.ready();
  });

  afterAll(async () => {
    await after?.cleanup();
    await before?.cleanup();
    await Promise.all([dav?.stop(), ssh?.stop(), ftp?.stop(), s3?.stop()]);
  });

  it('answer 401 with the cloud marked expired after a restart, for file calls and new tasks, and reauthorise', async () => {
    // Before the change: two users each connect every server and use it (the provider is pooled).
    // The first account (the operator) may connect a local folder: it plans tasks into one.
    const tasking = await signUp(appBefore);
    const browsing = await signUp(appBefore);
    const ids = new Map<Protocol, { browse: string; task: string; local: string }>();
    const localCloud = async (headers: Record<string, string>) => {
      const path = `${before.localRoot}/l-${Math.random().toString(36).slice(2)}`;
      (await import('node:fs')).mkdirSync(path);
      const res = await call<Cloud>(appBefore, 'POST', '/api/clouds', headers, {
        cloud_name: 'local',
        credentials: { path },
      });
      return res.data.id;
    };
    const local = await localCloud(tasking);
    for (const p of protocols) {
      const connect = async (headers: Record<string, string>) => {
        const res = await call<Cloud>(appBefore, 'POST', '/api/clouds', headers, {
          cloud_name: p.kind,
          credentials: p.credentials,
        });
        expect(res.code, `${p.name}: ${res.msg}`).toBe(0);
        const listed = await call(appBefore, 'POST', '/api/cloud-manager/list', headers, {
          cloud_id: res.data.id,
          path: '/',
        });
        expect(listed.code, p.name).toBe(0);
        return res.data.id;
      };
      ids.set(p, { browse: await connect(browsing), task: await connect(tasking), local });
    }

    // The credentials change on the servers; then the Skyferry server restarts (a fresh context on
    // the same database and secret: nothing is pooled).
    const fresh = new Map<Protocol, Record<string, unknown>>();
    for (const p of protocols) {
      const id = ids.get(p)!;
      fresh.set(
        p,
        await p.change(
          async (cloudId, credentials) => {
            const sealed = before.ctx.secrets.sealJson(credentials, `cloud:${cloudId}:credentials`);
            await before.ctx.db.kysely
              .updateTable('clouds')
              .set({ credentials_enc: sealed.ciphertext, key_version: sealed.keyVersion })
              .where('id', '=', cloudId)
              .execute();
          },
          [id.browse, id.task],
        ),
      );
    }
    await appBefore.close();
    after = await createTestContext({
      // The same server restarted: its database, secret and local-folder roots.
      env: {
        ...ENV,
        DATABASE_URL: before.databaseUrl,
        SKYFERRY_SECRET: before.config.secret,
        SKYFERRY_LOCAL_ROOTS: before.localRoot,
      },
    });
    appAfter = await after.buildApp();
    await appAfter.ready();

    for (const p of protocols) {
      const id = ids.get(p)!;
      const listed = await call(appAfter, 'POST', '/api/cloud-manager/list', browsing, {
        cloud_id: id.browse,
        path: '/',
      });
      expect([listed.status, listed.code, listed.msg, listed.data], p.name).toEqual([
        401,
        Code.CLOUD_AUTH_EXPIRED,
        EXPIRED_MSG,
        { cloud_id: id.browse },
      ]);
      const planned = await call(appAfter, 'POST', '/api/tasks', tasking, {
        task_type: 0,
        from_cloud: { cloud_id: id.task, paths: ['/'] },
        to_cloud: { cloud_id: id.local, path: '/' },
        dry_run: true,
      });
      expect([planned.status, planned.code, planned.msg, planned.data], p.name).toEqual([
        401,
        Code.CLOUD_AUTH_EXPIRED,
        EXPIRED_MSG,
        { cloud_id: id.task },
      ]);
    }
    const statusOf = async (headers: Record<string, string>) => {
      const me = await call<CloudsMeData>(appAfter, 'GET', '/api/v2/clouds/me', headers);
      return Object.fromEntries(me.data.clouds.map((c) => [c.id, c.status]));
    };
    const browsed = await statusOf(browsing);
    const tasked = await statusOf(tasking);
    for (const p of protocols) {
      expect(browsed[ids.get(p)!.browse], p.name).toBe('expired');
      expect(tasked[ids.get(p)!.task], p.name).toBe('expired');
      expect(tasked[ids.get(p)!.local], p.name).toBe('authorized');
    }
    expect(after.logs()).not.toContain('unhandled error');

    // Reauthorising with what the server takes now brings the cloud back.
    ssh.restoreClientKeys();
    for (const p of protocols) {
      const id = ids.get(p)!.browse;
      const re = await call<Cloud>(appAfter, 'PUT', `/api/clouds/${id}/credentials`, browsing, {
        credentials: fresh.get(p),
      });
      expect([re.code, re.data?.status], `${p.name}: ${re.msg}`).toEqual([0, 'authorized']);
      const listed = await call(appAfter, 'POST', '/api/cloud-manager/list', browsing, { cloud_id: id, path: '/' });
      expect(listed.code, p.name).toBe(0);
    }
  });
});
