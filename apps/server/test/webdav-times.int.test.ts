import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cloud, CreateTaskData } from '@skyferry/contract';
import {
  startApacheWebdav,
  startNextcloudEmulator,
  type NextcloudEmulator,
  type WebdavServer,
} from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, writeTree } from './support/tasks.ts';
import { LOOPBACK_CLOUDS_ENV } from './support/visitor-clouds.ts';

/**
 * What a WebDAV cloud does with modification times is found out once, when it is connected, kept
 * with the cloud, and reported where a run is previewed: files copied to a server that keeps no
 * given time show the transfer's time.
 */
describe('modification times on WebDAV clouds', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let apache: WebdavServer;
  let keeper: NextcloudEmulator;
  let local: Cloud;
  let kept: Cloud;
  const call = caller(() => t);

  beforeAll(async () => {
    [t, apache, keeper] = await Promise.all([
      startTestApp({ env: LOOPBACK_CLOUDS_ENV }),
      startApacheWebdav(),
      startNextcloudEmulator({ product: 'none' }),
    ]);
    u = await t.signUp();
    const dir = t.makeLocalFolder('src');
    writeTree(dir, { 'Docs/a.txt': 'alpha' });
    local = await connectLocal(call, u.headers, dir, 'Laptop');
  }, 60_000);
  afterAll(async () => {
    await Promise.all([t?.close(), apache?.stop(), keeper?.stop()]);
  });

  const connect = async (server: { url: string; username: string; password: string }, alias: string) => {
    const res = await call<Cloud>('POST', '/api/clouds', {
      headers: u.headers,
      body: {
        cloud_name: 'webdav',
        alias,
        credentials: { url: server.url, username: server.username, password: server.password },
      },
    });
    expect(res.code, res.msg).toBe(0);
    return res.data;
  };
  const preview = (target: Cloud) =>
    call<CreateTaskData>('POST', '/api/tasks', {
      headers: u.headers,
      body: {
        task_type: 0,
        from_cloud: { cloud_id: local.id, paths: ['/Docs'] },
        to_cloud: { cloud_id: target.id, path: '/' },
        dry_run: true,
      },
    });

  it('a dry run says the target keeps no modification times on Apache mod_dav, and keeps them on a server taking X-OC-Mtime', async () => {
    const plain = await connect(apache, 'Plain DAV');
    kept = await connect(keeper, 'Keeping DAV');
    const toPlain = await preview(plain);
    expect(toPlain.code, toPlain.msg).toBe(0);
    expect(toPlain.data.plan?.times_kept).toEqual({ source: true, target: false });
    const toKept = await preview(kept);
    expect(toKept.data.plan?.times_kept).toEqual({ source: true, target: true });
  });

  it('the server is asked once, when the cloud is connected: later opens use what was kept with the cloud', async () => {
    const probes = () => keeper.requests.filter((r) => /^(PUT|PROPPATCH) \/\.skyferry-tmp-/.test(r)).length;
    // The connect of the test above asked; its dry run and these did not.
    expect(probes()).toBe(1);
    for (let i = 0; i < 3; i++) expect((await preview(kept)).data.plan?.times_kept.target).toBe(true);
    expect(probes()).toBe(1);
  });
});
