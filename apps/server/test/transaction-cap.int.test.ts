/**
 * A storage service's transaction cap (Backblaze B2's "Transaction cap exceeded", spec section 8
 * code 6007001) over HTTP. B2 itself is unreachable from here, so a small proxy in front of s3rver
 * answers what B2's S3-compatible API answers once the cap is used up (its published error: HTTP
 * 403, an S3 XML error whose message names the cap) for the calls chosen, and passes the rest to
 * s3rver unchanged.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, message, type Cloud, type CreateTaskData } from '@skyferry/contract';
import { startS3rver, type S3rverServer } from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

const CAP_MESSAGE = 'Transaction cap exceeded, see the Caps & Alerts page to increase your cap';
const CAP_BODY =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Error>\n    <Code>AccessDenied</Code>\n' +
  '    <Message>Transaction cap exceeded, see the Caps &amp; Alerts page to increase your cap</Message>\n</Error>\n';

/**
 * Which calls the proxy answers with the cap error: none, every call, only writes (PUT/POST/DELETE)
 * or only GETs (listings, downloads). A HEAD answer has no body, so on B2 a capped HEAD is a plain
 * 403 that cannot be told from a refusal; the cases below go through calls that carry the message.
 */
type CapMode = 'off' | 'all' | 'writes' | 'reads';

interface CapProxy {
  endpoint: string;
  mode: CapMode;
  /** Calls answered with the cap error since the last reset. */
  capped: number;
  close(): Promise<void>;
}

async function startCapProxy(target: S3rverServer): Promise<CapProxy> {
  const upstream = new URL(target.endpoint);
  const state = { mode: 'off' as CapMode, capped: 0 };
  const server: Server = createServer((req, res) => {
    const write = req.method === 'PUT' || req.method === 'POST' || req.method === 'DELETE';
    const read = req.method === 'GET';
    if (state.mode === 'all' || (state.mode === 'writes' && write) || (state.mode === 'reads' && read)) {
      state.capped++;
      req.resume();
      req.on('end', () => {
        res.writeHead(403, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(CAP_BODY) });
        res.end(req.method === 'HEAD' ? undefined : CAP_BODY);
      });
      return;
    }
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m: CapMode) {
      state.mode = m;
      state.capped = 0;
    },
    get capped() {
      return state.capped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a used-up transaction cap (Backblaze B2 over S3) answers 6007001', () => {
  let t: TestApp;
  let s3: S3rverServer;
  let proxy: CapProxy;
  let user: SignedUpUser;
  let bucket: Cloud;
  let laptop: Cloud;
  const call = caller(() => t);

  const credentials = (name = 'files') => ({
    bucket: name,
    access_key_id: s3.accessKeyId,
    secret_access_key: s3.secretAccessKey,
    endpoint: proxy.endpoint,
    region: s3.region,
    path_style: true,
  });

  beforeAll(async () => {
    s3 = await startS3rver({ buckets: ['files', 'other'] });
    proxy = await startCapProxy(s3);
    t = await startTestApp({ dialect: 'sqlite', env: { SKYFERRY_WORKERS: '1' } });
    user = await t.signUp();
    const res = await call<Cloud>('POST', '/api/clouds', {
      headers: user.headers,
      body: { cloud_name: 's3_compatible', alias: 'B2', credentials: credentials() },
    });
    if (res.code !== 0) throw new Error(`connect failed: ${res.status} ${res.msg}`);
    bucket = res.data;
    const dir = t.makeLocalFolder('laptop');
    writeTree(dir, { 'Docs/a.txt': 'alpha', 'Docs/b.txt': 'bravo', 'Docs/c.txt': 'charlie' });
    laptop = await connectLocal(call, user.headers, dir, 'Laptop');
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await s3?.stop();
  });

  it('a file call gets 6007001 with the catalogue message; the cloud stays connected', async () => {
    proxy.mode = 'all';
    const res = await call('POST', '/api/cloud-manager/list', {
      headers: user.headers,
      body: { cloud_id: bucket.id, path: '/', refresh: true },
    });
    expect(res.code).toBe(Code.TRANSACTION_CAP);
    expect(res.msg).toBe(CAP_MESSAGE);
    expect(res.msg).toBe(message('en', 'transaction_cap'));
    expect(res.status).toBe(429);
    // Not retried over and over: the cap does not lift by asking again.
    expect(proxy.capped).toBeLessThanOrEqual(2);
    // The message follows the caller's language.
    const de = await call('POST', '/api/cloud-manager/list', {
      headers: { ...user.headers, 'accept-language': 'de' },
      body: { cloud_id: bucket.id, path: '/', refresh: true },
    });
    expect(de.code).toBe(Code.TRANSACTION_CAP);
    expect(de.msg).toBe(message('de', 'transaction_cap'));

    proxy.mode = 'off';
    const ok = await call('POST', '/api/cloud-manager/list', {
      headers: user.headers,
      body: { cloud_id: bucket.id, path: '/', refresh: true },
    });
    expect(ok.code).toBe(0);
  });

  it('connecting a capped bucket answers 6007001, not "credentials invalid"', async () => {
    proxy.mode = 'all';
    const res = await call('POST', '/api/clouds', {
      headers: user.headers,
      body: { cloud_name: 's3_compatible', alias: 'B2 again', credentials: credentials('other') },
    });
    expect(res.code).toBe(Code.TRANSACTION_CAP);
    expect(res.msg).toBe(CAP_MESSAGE);
    proxy.mode = 'off';
  });

  for (const mode of ['writes', 'reads'] as const) {
    it(`a transfer into the bucket stops at once, failed, with the reason transaction_cap (${mode === 'reads' ? 'listing' : 'uploads'} refused)`, async () => {
      // Into the bucket's root when the listing is refused: the planner lists what is there first.
      const targetPath = mode === 'reads' ? '/' : `/Backup-${mode}`;
      proxy.mode = mode;
      const created = await call<CreateTaskData>('POST', '/api/tasks', {
        headers: user.headers,
        body: {
          task_type: 0,
          from_cloud: { cloud_id: laptop.id, paths: ['/Docs'] },
          to_cloud: { cloud_id: bucket.id, path: targetPath },
          confirm_insufficient_space: true,
        },
      });
      expect(created.code, created.msg).toBe(0);
      const { task } = await waitForState(call, user.headers, created.data.task?.id ?? '');
      expect(task.state).toBe(3);
      expect(task.result?.outcome).toBe('failed');
      expect(task.result?.error).toEqual({ code: 'transaction_cap', message: CAP_MESSAGE });
      if (mode === 'writes') {
        // Every file is listed as not done for that reason, so a retry after raising the cap redoes them.
        expect(task.result_list.length).toBe(3);
        expect(new Set(task.result_list.map((f) => f.reason))).toEqual(new Set(['transaction_cap']));
      }
      // Fatal: the run did not keep trying (three files, a handful of calls at most).
      expect(proxy.capped).toBeGreaterThan(0);
      expect(proxy.capped).toBeLessThanOrEqual(6);
      // Nothing landed in the bucket.
      proxy.mode = 'off';
      const listed = await call<{ items: { name: string }[] }>('POST', '/api/cloud-manager/list', {
        headers: user.headers,
        body: { cloud_id: bucket.id, path: '/', refresh: true },
      });
      const names = listed.data.items.map((i) => i.name);
      expect(names).not.toContain(`Backup-${mode}`);
      expect(names).not.toContain('a.txt');
    });
  }
});
