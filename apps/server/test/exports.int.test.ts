/**
 * Export to a cloud (issue 37): POST /api/third-api/start-upload and GET /api/third-api/poll-progress,
 * into real S3 (s3rver) and WebDAV (Apache) servers on loopback, with inline base64 data and with a
 * download_url served by a loopback HTTP server of the test's own.
 *
 * Networks: the clouds listen on 127.0.0.1, which the first server allows
 * (SKYFERRY_ALLOW_PRIVATE_NETWORKS=127.0.0.1/32); the download servers listen on 127.0.0.2, another
 * loopback address that it refuses. The second server allows every private network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, EXPORT_FOLDER_NAME, type ExportProgress } from '@skyferry/contract';
import { startApacheWebdav, startS3rver, type ApacheWebdavServer, type S3rverServer } from '@skyferry/testing';
import { envelope, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';

interface Source {
  server: Server;
  url: (path: string) => string;
  requests: string[];
}

/** An HTTP server on `host` answering by `handler`; records the paths asked for. */
async function startSource(
  host: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Source> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return { server, url: (path) => `http://${host}:${port}${path}`, requests };
}

const stop = (s?: Source) =>
  s ? new Promise<void>((resolve) => (s.server.closeAllConnections(), s.server.close(() => resolve()))) : undefined;

const BYTES = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251));

/** Lets the slow download send its second half. */
let releaseSlow: () => void = () => undefined;
/** Ends the held downloads (each sends its byte). */
const held: Array<() => void> = [];

function fileServer(req: IncomingMessage, res: ServerResponse, refused: () => string): void {
  if (req.url === '/slow') {
    // Half the file, then nothing until the test lets the rest go.
    res.writeHead(200, { 'content-length': BYTES.length });
    res.write(BYTES.subarray(0, BYTES.length / 2));
    releaseSlow = () => res.end(BYTES.subarray(BYTES.length / 2));
  } else if (req.url === '/hold') {
    res.writeHead(200, { 'content-length': 1 });
    res.flushHeaders();
    held.push(() => res.end('x'));
  } else if (req.url === '/file.bin') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BYTES.length });
    res.end(BYTES);
  } else if (req.url === '/redirect-ok') {
    res.writeHead(302, { location: '/file.bin' });
    res.end();
  } else if (req.url === '/redirect-refused') {
    res.writeHead(302, { location: refused() });
    res.end();
  } else if (req.url === '/loop') {
    res.writeHead(302, { location: '/loop' });
    res.end();
  } else if (req.url === '/missing') {
    res.writeHead(404);
    res.end('no');
  } else if (req.url === '/huge-announced') {
    // Announces 10 GB, which is over the server's limit: nothing is read.
    res.writeHead(200, { 'content-length': String(10 * 1024 ** 3) });
    res.write(Buffer.alloc(1024));
  } else if (req.url === '/endless') {
    // No length, and bytes without end: more than the announced file_size fails the export.
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    const pump = () => {
      while (res.write(chunk)) {
        /* keep writing until the socket is full */
      }
    };
    res.on('drain', pump);
    res.on('close', () => res.off('drain', pump));
    pump();
  } else {
    res.writeHead(500);
    res.end();
  }
}

async function call<T>(
  t: TestApp,
  headers: Record<string, string>,
  method: 'GET' | 'POST',
  url: string,
  body?: object,
) {
  const res = await t.app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
  return { status: res.statusCode, ...envelope<T>(res) };
}

/** Polls every 100 ms until the status leaves 0 (or 20 s pass). */
async function waitForEnd(t: TestApp, headers: Record<string, string>, taskId: string): Promise<ExportProgress> {
  const until = Date.now() + 20_000;
  for (;;) {
    const p = await call<ExportProgress>(t, headers, 'GET', `/api/third-api/poll-progress/${taskId}`);
    expect(p.code).toBe(0);
    if (p.data.status !== 0 || Date.now() > until) return p.data;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('export to a cloud: start-upload, poll-progress', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let s3: S3rverServer;
  let dav: ApacheWebdavServer;
  let allowedSource: Source;
  let refusedSource: Source;
  let s3Cloud = '';
  let davCloud = '';

  beforeAll(async () => {
    [t, s3, dav] = await Promise.all([
      startTestApp({ env: { SKYFERRY_ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', SKYFERRY_EXPORT_MAX_BYTES: '1000000' } }),
      startS3rver({ buckets: ['exports'] }),
      startApacheWebdav(),
    ]);
    refusedSource = await startSource('127.0.0.2', (req, res) => fileServer(req, res, () => ''));
    allowedSource = await startSource('127.0.0.1', (req, res) =>
      fileServer(req, res, () => refusedSource.url('/file.bin')),
    );
    u = await t.signUp();
    const s3res = await call<{ id: string }>(t, u.headers, 'POST', '/api/clouds', {
      cloud_name: 's3_compatible',
      alias: 'Bucket',
      credentials: {
        bucket: 'exports',
        access_key_id: s3.accessKeyId,
        secret_access_key: s3.secretAccessKey,
        endpoint: s3.endpoint,
        region: s3.region,
        path_style: true,
      },
    });
    expect(s3res.code).toBe(0);
    s3Cloud = s3res.data.id;
    const davres = await call<{ id: string }>(t, u.headers, 'POST', '/api/clouds', {
      cloud_name: 'webdav',
      alias: 'Dav',
      credentials: { url: dav.url, username: dav.username, password: dav.password },
    });
    expect(davres.code).toBe(0);
    davCloud = davres.data.id;
  });
  afterAll(async () => {
    await Promise.all([t?.close(), s3?.stop(), dav?.stop(), stop(allowedSource), stop(refusedSource)]);
  });

  const start = (body: object, headers = u.headers) =>
    call<{ task_id: string }>(t, headers, 'POST', '/api/third-api/start-upload', body);

  it('mkdir of the export folder answers its id and reuses it the second time', async () => {
    const body = {
      cloud_type: 'webdav',
      token_id: davCloud,
      folder_name: EXPORT_FOLDER_NAME,
      not_allow_conflict: true,
    };
    const first = await call<string>(t, u.headers, 'POST', '/api/cloud-manager/mkdir', body);
    const again = await call<string>(t, u.headers, 'POST', '/api/cloud-manager/mkdir', body);
    expect(first.code).toBe(0);
    expect(again).toMatchObject({ code: 0, data: first.data });
  });

  it('base64_data with its data-URL prefix lands in the WebDAV folder, byte for byte; status 1, percent 100', async () => {
    const started = await start({
      cloud_type: 'webdav',
      token_id: davCloud,
      file_name: 'picture.png',
      file_size: BYTES.length,
      referer: 'https://app.example/editor',
      parent: `/${EXPORT_FOLDER_NAME}`,
      base64_data: `data:image/png;base64,${BYTES.toString('base64')}`,
    });
    expect(started.code).toBe(0);
    const done = await waitForEnd(t, u.headers, started.data.task_id);
    expect(done).toMatchObject({ status: 1, percent: 100, path: '/Skyferry/picture.png', size: BYTES.length });
    expect(readFileSync(join(dav.dir, 'Skyferry', 'picture.png')).equals(BYTES)).toBe(true);

    // The same name again: a second file beside it, the first untouched.
    const second = await start({
      token_id: davCloud,
      file_name: 'picture.png',
      parent: '/Skyferry',
      base64_data: Buffer.from('second').toString('base64'),
    });
    const end = await waitForEnd(t, u.headers, second.data.task_id);
    expect(end).toMatchObject({ status: 1, path: '/Skyferry/picture (1).png' });
    expect(readFileSync(join(dav.dir, 'Skyferry', 'picture (1).png'), 'utf8')).toBe('second');
    expect(readFileSync(join(dav.dir, 'Skyferry', 'picture.png')).equals(BYTES)).toBe(true);
  });

  it('a download_url (followed through a redirect) streams into S3 with the size it announced', async () => {
    const started = await start({
      cloud_type: 's3_compatible',
      token_id: s3Cloud,
      file_name: 'from-url.bin',
      parent: '/Skyferry',
      download_url: allowedSource.url('/redirect-ok'),
    });
    expect(started.code).toBe(0);
    const done = await waitForEnd(t, u.headers, started.data.task_id);
    expect(done).toMatchObject({ status: 1, percent: 100, size: BYTES.length, transferred: BYTES.length });
    const got = await t.app.inject({
      method: 'GET',
      url: `/api/cloud-manager/files?cloud_id=${s3Cloud}&path=/Skyferry/from-url.bin`,
      headers: u.headers,
    });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(BYTES)).toBe(true);
  });

  it('progress shows while the bytes flow (status 0, the percent written so far), then 1', async () => {
    const started = await start({
      token_id: davCloud,
      file_name: 'slow.bin',
      download_url: allowedSource.url('/slow'),
    });
    let seen: ExportProgress | undefined;
    for (let i = 0; i < 200 && !(seen && seen.transferred >= BYTES.length / 2); i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      seen = (await call<ExportProgress>(t, u.headers, 'GET', `/api/third-api/poll-progress/${started.data.task_id}`))
        .data;
    }
    expect(seen).toMatchObject({ status: 0, percent: 50, size: BYTES.length, transferred: BYTES.length / 2 });
    releaseSlow();
    expect(await waitForEnd(t, u.headers, started.data.task_id)).toMatchObject({ status: 1, percent: 100 });
    expect(readFileSync(join(dav.dir, 'slow.bin')).equals(BYTES)).toBe(true);
  });

  it('a download link of this server copies a file from one of the caller’s clouds to another (no network fetch)', async () => {
    const link = await call<{ url: string }>(t, u.headers, 'POST', '/api/cloud-manager/download-link', {
      cloud_id: davCloud,
      paths: ['/Skyferry/picture.png'],
    });
    expect(link.code).toBe(0);
    const started = await start({
      token_id: s3Cloud,
      file_name: 'copied.png',
      parent: '/Skyferry',
      download_url: link.data.url,
    });
    expect(started.code).toBe(0);
    expect(await waitForEnd(t, u.headers, started.data.task_id)).toMatchObject({ status: 1, size: BYTES.length });
    const got = await t.app.inject({
      method: 'GET',
      url: `/api/cloud-manager/files?cloud_id=${s3Cloud}&path=/Skyferry/copied.png`,
      headers: u.headers,
    });
    expect(got.rawPayload.equals(BYTES)).toBe(true);
    // Someone else's link (or another path of this server) is not a source.
    const other = await t.signUp();
    const otherCloud = await call<{ id: string }>(t, other.headers, 'POST', '/api/clouds', {
      cloud_name: 'local',
      credentials: { path: t.makeLocalFolder() },
    });
    const theirs = await start(
      { token_id: otherCloud.data.id, file_name: 'x.png', download_url: link.data.url },
      other.headers,
    );
    expect([theirs.status, theirs.code]).toEqual([404, Code.NOT_FOUND]);
    const elsewhere = await start({ token_id: s3Cloud, file_name: 'x.png', download_url: '/api/v2/init' });
    expect([elsewhere.status, elsewhere.code]).toEqual([400, Code.BAD_REQUEST]);
    const forged = await start({
      token_id: s3Cloud,
      file_name: 'x.png',
      download_url: '/api/cloud-manager/files?link=abc.def',
    });
    expect([forged.status, forged.code]).toEqual([404, Code.NOT_FOUND]);
  });

  it('a download_url on a refused network is a 403 at once, and nothing is fetched', async () => {
    const before = refusedSource.requests.length;
    for (const url of [refusedSource.url('/file.bin'), 'http://[::1]:9/x', 'http://0x7f000002:80/x']) {
      const r = await start({ token_id: s3Cloud, file_name: 'no.bin', download_url: url });
      expect([r.status, r.code], url).toEqual([403, Code.FORBIDDEN]);
      expect(r.msg).toContain('SKYFERRY_ALLOW_PRIVATE_NETWORKS');
    }
    expect(refusedSource.requests.length).toBe(before);
  });

  it('a redirect to a refused address fails the export (-2) without reaching it', async () => {
    const before = refusedSource.requests.length;
    const started = await start({
      token_id: s3Cloud,
      file_name: 'redirected.bin',
      download_url: allowedSource.url('/redirect-refused'),
    });
    expect(started.code).toBe(0);
    const done = await waitForEnd(t, u.headers, started.data.task_id);
    expect(done.status).toBe(-2);
    expect(done.error).toMatchObject({ code: Code.FORBIDDEN });
    expect(done.error?.msg).toContain('private');
    expect(refusedSource.requests.length).toBe(before);
  });

  it('hostile answers fail with a clear reason: too large, longer than announced, 404, a redirect loop', async () => {
    const cases: Array<[string, object, number, string]> = [
      ['/huge-announced', {}, Code.PAYLOAD_TOO_LARGE, 'too large'],
      ['/endless', { file_size: 100_000 }, Code.BAD_REQUEST, 'size it announced'],
      ['/endless', {}, Code.BAD_REQUEST, 'file_size'],
      ['/missing', {}, Code.BAD_REQUEST, 'HTTP 404'],
      ['/loop', {}, Code.BAD_REQUEST, 'redirects too many'],
    ];
    for (const [path, extra, code, text] of cases) {
      const started = await start({
        token_id: davCloud,
        file_name: 'hostile.bin',
        download_url: allowedSource.url(path),
        ...extra,
      });
      expect(started.code, path).toBe(0);
      const done = await waitForEnd(t, u.headers, started.data.task_id);
      expect([done.status, done.error?.code], path).toEqual([-2, code]);
      expect(done.error?.msg, path).toContain(text);
    }
    // A declared size over the limit is refused before anything is fetched.
    const big = await start({
      token_id: davCloud,
      file_name: 'big.bin',
      file_size: 2_000_000,
      download_url: allowedSource.url('/file.bin'),
    });
    expect([big.status, big.code]).toEqual([413, Code.PAYLOAD_TOO_LARGE]);
  });

  it('bad requests are 4xx: two sources, none, a bad name, bad base64, a non-http address', async () => {
    const cases: Array<[object, number]> = [
      [{ token_id: davCloud, file_name: 'a', base64_data: 'AA==', download_url: allowedSource.url('/file.bin') }, 400],
      [{ token_id: davCloud, file_name: 'a' }, 400],
      [{ token_id: davCloud, file_name: 'a:b', base64_data: 'AA==' }, 400],
      [{ token_id: davCloud, file_name: 'a', base64_data: '***' }, 400],
      [{ token_id: davCloud, file_name: 'a', download_url: 'file:///etc/passwd' }, 400],
      [{ token_id: davCloud, file_name: 'a', download_url: 'not a url' }, 400],
      [{ token_id: davCloud, cloud_type: 's3_compatible', file_name: 'a', base64_data: 'AA==' }, 404],
      [{ file_name: 'a', base64_data: 'AA==' }, 400],
    ];
    for (const [body, status] of cases) {
      const r = await start(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.code).not.toBe(0);
    }
  });

  it('at most four exports of one owner run at once: the fifth is 429 until one ends', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const r = await start({
        token_id: davCloud,
        file_name: `held-${i}.bin`,
        download_url: allowedSource.url('/hold'),
      });
      expect(r.code).toBe(0);
      ids.push(r.data.task_id);
    }
    const fifth = await start({ token_id: davCloud, file_name: 'fifth.txt', base64_data: 'eA==' });
    expect([fifth.status, fifth.code]).toEqual([429, Code.RATE_LIMITED]);
    // Someone else is not held back by it.
    const other = await t.signUp();
    const local = await call<{ id: string }>(t, other.headers, 'POST', '/api/clouds', {
      cloud_name: 'local',
      credentials: { path: t.makeLocalFolder() },
    });
    const theirs = await start({ token_id: local.data.id, file_name: 'x.txt', base64_data: 'eA==' }, other.headers);
    expect(theirs.code).toBe(0);
    await expect.poll(() => held.length).toBe(4);
    for (const release of held.splice(0)) release();
    for (const id of ids) expect((await waitForEnd(t, u.headers, id)).status).toBe(1);
    const again = await start({ token_id: davCloud, file_name: 'fifth.txt', base64_data: 'eA==' });
    expect(again.code).toBe(0);
  });

  it('an export whose process is gone (no word for a minute) reads as failed', async () => {
    const long = Date.now() - 120_000;
    await t.ctx.db.kysely
      .insertInto('export_tasks')
      .values({
        id: 'orphan-export',
        user_id: u.uid,
        visitor_id: null,
        cloud_id: davCloud,
        path: '/orphan.bin',
        file_name: 'orphan.bin',
        size: 10,
        transferred: 4,
        status: 0,
        error_code: null,
        error_key: null,
        error_params: null,
        created_at: long,
        updated_at: long,
      })
      .execute();
    const p = await call<ExportProgress>(t, u.headers, 'GET', '/api/third-api/poll-progress/orphan-export');
    expect(p.data).toMatchObject({ status: -2, percent: 40, error: { code: Code.INTERNAL } });
  });

  it('nobody else can poll an export, and nobody else can export into the cloud', async () => {
    const started = await start({ token_id: davCloud, file_name: 'mine.txt', base64_data: 'bWluZQ==' });
    await waitForEnd(t, u.headers, started.data.task_id);
    const other = await t.signUp();
    const visitor = await t.visitor();
    for (const headers of [other.headers, visitor.headers]) {
      const p = await call(t, headers, 'GET', `/api/third-api/poll-progress/${started.data.task_id}`);
      expect([p.status, p.code]).toEqual([404, Code.NOT_FOUND]);
      const s = await start({ token_id: davCloud, file_name: 'theirs.txt', base64_data: 'eA==' }, headers);
      expect([s.status, s.code]).toEqual([404, Code.NOT_FOUND]);
    }
    const unknown = await call(t, u.headers, 'GET', '/api/third-api/poll-progress/no-such-export');
    expect([unknown.status, unknown.code]).toEqual([404, Code.NOT_FOUND]);
  });
});

describe('export from a private network the operator allows', () => {
  let t: TestApp;
  let source: Source;

  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    source = await startSource('127.0.0.2', (req, res) => fileServer(req, res, () => ''));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), stop(source)]);
  });

  it('fetches a loopback download_url when SKYFERRY_ALLOW_PRIVATE_NETWORKS allows it', async () => {
    const u = await t.signUp();
    const folder = t.makeLocalFolder();
    const cloud = await call<{ id: string }>(t, u.headers, 'POST', '/api/clouds', {
      cloud_name: 'local',
      credentials: { path: folder },
    });
    const started = await call<{ task_id: string }>(t, u.headers, 'POST', '/api/third-api/start-upload', {
      token_id: cloud.data.id,
      file_name: 'allowed.bin',
      parent: '/Skyferry',
      download_url: source.url('/file.bin'),
    });
    expect(started.code).toBe(0);
    const done = await waitForEnd(t, u.headers, started.data.task_id);
    expect(done).toMatchObject({ status: 1, percent: 100 });
    expect(readFileSync(join(folder, 'Skyferry', 'allowed.bin')).equals(BYTES)).toBe(true);
  });
});

describe('exports count against the plan’s transfer data (billing on)', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let cloudId = '';
  let folder = '';
  beforeAll(async () => {
    t = await startTestApp({ env: { BILLING_MODE: 'test' } });
    u = await t.signUp();
    await t.ctx.users.grantLicense(u.uid, 'month');
    folder = t.makeLocalFolder();
    const made = await call<{ id: string }>(t, u.headers, 'POST', '/api/clouds', {
      cloud_name: 'local',
      credentials: { path: folder },
    });
    cloudId = made.data.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('charges what an export wrote, and refuses one when no data is left (4001001)', async () => {
    const start = (data: Buffer) =>
      call<{ task_id: string }>(t, u.headers, 'POST', '/api/third-api/start-upload', {
        token_id: cloudId,
        file_name: 'out.bin',
        file_size: data.length,
        base64_data: data.toString('base64'),
      });
    const before = await t.ctx.users.remainingTraffic(u.uid);
    expect(before).toBeGreaterThan(BYTES.length);
    const started = await start(BYTES);
    expect(started.code).toBe(0);
    expect(await waitForEnd(t, u.headers, started.data.task_id)).toMatchObject({ status: 1 });
    expect(before - (await t.ctx.users.remainingTraffic(u.uid))).toBe(BYTES.length);
    // The rest used up elsewhere: the next export is refused before anything is written.
    await t.ctx.users.chargeTraffic(u.uid, await t.ctx.users.remainingTraffic(u.uid));
    const refused = await start(Buffer.from('more'));
    expect([refused.status, refused.code]).toEqual([402, Code.TRAFFIC_INSUFFICIENT]);
    expect(refused.msg).not.toBe('');
  });
});
