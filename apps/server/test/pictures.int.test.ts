/**
 * Pictures through the server (issue 37): thumbnails and the apps read the original through the
 * local disk, never whole in memory, and leave nothing behind; HEIC (which browsers and the
 * bundled libvips cannot decode) is decoded for thumbnails, the Viewer and the converter.
 * red-blue.heic is a 64x48 picture, left half red and right half blue, made with libheif's heif-enc.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_PARTY_APP_IDS, type AppFileInfo, type AppTokenData } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, writeTree } from './support/tasks.ts';

const HEIC = readFileSync(join(import.meta.dirname, 'fixtures/red-blue.heic'));

/** The colour at (x, y) of a picture, as [r, g, b]. */
async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 3;
  return [data[i], data[i + 1], data[i + 2]] as number[];
}

function near(actual: number[], expected: number[]): boolean {
  return actual.every((v, i) => Math.abs(v - (expected[i] as number)) < 40);
}

describe('pictures: streamed thumbnails, HEIC', () => {
  let t: TestApp;
  const call = caller(() => t);
  let user: SignedUpUser;
  let dir: string;
  let cloudId: string;
  let spoolDir: string;
  const savedTmp = process.env.TMPDIR;

  beforeAll(async () => {
    // The server's spool files go here, so the tests can see that none is left behind.
    spoolDir = mkdtempSync(join(tmpdir(), 'pictures-test-'));
    process.env.TMPDIR = spoolDir;
    t = await startTestApp();
    user = await t.signUp();
    dir = t.makeLocalFolder();
    const jpeg = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#3080d0' } })
      .jpeg()
      .toBuffer();
    writeTree(dir, { 'red-blue.heic': HEIC, 'sky.jpg': jpeg, 'broken.jpg': 'not a jpeg at all' });
    cloudId = (await connectLocal(call, user.headers, dir)).id;
  });
  afterAll(async () => {
    process.env.TMPDIR = savedTmp;
    await t?.close();
  });

  const thumbnail = (path: string, size = 128) =>
    t.app.inject({
      method: 'GET',
      url: `/api/cloud-manager/thumbnail?cloud_id=${cloudId}&path=${encodeURIComponent(path)}&size=${size}`,
      headers: user.headers,
    });

  it('makes a HEIC picture’s thumbnail, upright and in its colours', async () => {
    const res = await thumbnail('/red-blue.heic', 128);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/webp']);
    const meta = await sharp(res.rawPayload).metadata();
    // Never enlarged past the original's 64x48.
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 64, 48]);
    expect(near(await pixel(res.rawPayload, 5, 24), [220, 30, 30])).toBe(true);
    expect(near(await pixel(res.rawPayload, 58, 24), [30, 30, 220])).toBe(true);
  });

  it('makes a JPEG thumbnail and answers an undecodable file as it is, leaving no spool file behind', async () => {
    const sky = await thumbnail('/sky.jpg', 256);
    expect([sky.statusCode, sky.headers['content-type']]).toEqual([200, 'image/webp']);
    const meta = await sharp(sky.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([256, 192]);
    const broken = await thumbnail('/broken.jpg');
    expect(broken.statusCode).toBe(200);
    expect(broken.body).toBe('not a jpeg at all');
    // The original was read back from the disk and the copy removed once sent.
    await new Promise((r) => setTimeout(r, 50));
    expect(readdirSync(spoolDir).filter((n) => n.startsWith('skyferry-img-'))).toEqual([]);
  });

  const tokenFor = async (appId: number, path: string) =>
    call<AppTokenData>('POST', '/ecology/v1/app-tokens', {
      headers: user.headers,
      body: { app_id: appId, files: [{ cloud_id: cloudId, path }] },
    });

  it('shows a HEIC picture in the Viewer as a JPEG the browser can draw', async () => {
    const issued = await tokenFor(FIRST_PARTY_APP_IDS.viewer, '/red-blue.heic');
    expect(issued.code).toBe(0);
    const fileId = issued.data.files[0]?.file_id as string;
    const res = await t.app.inject({
      method: 'GET',
      url: `/ecology/v1/app/files/${fileId}/picture?app_token=${encodeURIComponent(issued.data.token)}`,
    });
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'image/jpeg']);
    const meta = await sharp(res.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 64, 48]);
    expect(near(await pixel(res.rawPayload, 5, 5), [220, 30, 30])).toBe(true);
    // Another token's files stay out of reach.
    const other = await tokenFor(FIRST_PARTY_APP_IDS.viewer, '/sky.jpg');
    const refused = await t.app.inject({
      method: 'GET',
      url: `/ecology/v1/app/files/${fileId}/picture?app_token=${encodeURIComponent(other.data.token)}`,
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.statusCode).toBeLessThan(500);
    // Not a picture: a clear 400.
    const broken = await tokenFor(FIRST_PARTY_APP_IDS.viewer, '/broken.jpg');
    const bad = await t.app.inject({
      method: 'GET',
      url: `/ecology/v1/app/files/${broken.data.files[0]?.file_id}/picture?app_token=${encodeURIComponent(broken.data.token)}`,
    });
    expect(bad.statusCode).toBe(400);
    expect(readdirSync(spoolDir).filter((n) => n.startsWith('skyferry-img-'))).toEqual([]);
  });

  it('gives a picture to no one but the app token it was opened with: not a visitor, another user, or the account token', async () => {
    const issued = await tokenFor(FIRST_PARTY_APP_IDS.viewer, '/red-blue.heic');
    const fileId = issued.data.files[0]?.file_id as string;
    const picture = (id: string, opts: { token?: string; headers?: Record<string, string> }) =>
      t.app.inject({
        method: 'GET',
        url: `/ecology/v1/app/files/${encodeURIComponent(id)}/picture${opts.token ? `?app_token=${encodeURIComponent(opts.token)}` : ''}`,
        ...(opts.headers ? { headers: opts.headers } : {}),
      });
    const refusals = [
      // A visitor and the owner's own account session carry no app token.
      await picture(fileId, { headers: (await t.visitor()).headers }),
      await picture(fileId, { headers: user.headers }),
    ];
    // Another user's viewer token, for a file of their own, does not reach this one (an operator
    // too, as only operators may connect folders of the server).
    const other = await t.signUp();
    const otherDir = t.makeLocalFolder();
    writeTree(otherDir, { 'mine.heic': HEIC });
    const otherCloud = (await connectLocal(call, other.headers, otherDir)).id;
    const otherToken = await call<AppTokenData>('POST', '/ecology/v1/app-tokens', {
      headers: other.headers,
      body: { app_id: FIRST_PARTY_APP_IDS.viewer, files: [{ cloud_id: otherCloud, path: '/mine.heic' }] },
    });
    refusals.push(await picture(fileId, { token: otherToken.data.token }));
    // Hostile file ids: paths, over-long, control characters.
    for (const id of ['../../etc/passwd', 'x'.repeat(5000), '\u0000', '%00'])
      refusals.push(await picture(id, { token: issued.data.token }));
    for (const r of refusals) {
      expect(r.statusCode).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(r.headers['content-type']).toMatch(/json/);
      expect(JSON.parse(r.body).code).not.toBe(0);
    }
    // The owner's token still works afterwards.
    expect((await picture(fileId, { token: issued.data.token })).statusCode).toBe(200);
  });

  it('converts a HEIC picture to PNG beside it', async () => {
    const issued = await tokenFor(FIRST_PARTY_APP_IDS.converter, '/red-blue.heic');
    expect(issued.code).toBe(0);
    const out = await call<AppFileInfo>('POST', `/ecology/v1/app/files/${issued.data.files[0]?.file_id}/convert`, {
      headers: { authorization: `Bearer ${issued.data.token}` },
      body: { format: 'png', name: 'red-blue.png' },
    });
    expect(out.code).toBe(0);
    const png = readFileSync(join(dir, 'red-blue.png'));
    const meta = await sharp(png).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 48]);
    expect(near(await pixel(png, 60, 40), [30, 30, 220])).toBe(true);
    writeFileSync(join(dir, 'red-blue.png'), '');
  });
});
