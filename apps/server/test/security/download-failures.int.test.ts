import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type DownloadLinkData } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from '../support/app.ts';
import { caller, connectLocal } from '../support/tasks.ts';

/**
 * A browser download that fails must not pass for a finished one. A link is made only for paths
 * that are there (a gone file answers 404 with the reason at once), and a link's answer tells the
 * page that started it when the download really began (the `sf-dl-<notify>` cookie); an error
 * answers the envelope and sets no such cookie.
 */
describe('downloads that fail say so', () => {
  let t: TestApp;
  let u: SignedUpUser;
  const call = caller(() => t);
  let dir = '';
  let cloudId = '';

  beforeAll(async () => {
    t = await startTestApp();
    u = await t.signUp();
    dir = t.makeLocalFolder('files');
    writeFileSync(join(dir, 'report.pdf'), 'pdf');
    writeFileSync(join(dir, 'gone.txt'), 'soon gone');
    cloudId = (await connectLocal(call, u.headers, dir)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const link = (paths: string[]) =>
    call<DownloadLinkData>('POST', '/api/cloud-manager/download-link', {
      headers: { ...u.headers, 'accept-language': 'de' },
      body: { cloud_id: cloudId, paths },
    });

  it('refuses a link for a path that is not there, with the reason in the caller language', async () => {
    for (const paths of [['/missing.txt'], ['/report.pdf', '/missing.txt']]) {
      const r = await link(paths);
      expect([r.status, r.code, r.msg], paths.join(',')).toEqual([404, Code.NOT_FOUND, 'Der Pfad existiert nicht.']);
    }
    expect((await link(['/report.pdf'])).code).toBe(0);
  });

  it('sets the cookie the page asked for when the download begins, and none when it fails', async () => {
    const ok = await link(['/report.pdf']);
    const started = await t.app.inject({ method: 'GET', url: `${ok.data.url}&notify=abcdef0123456789` });
    expect(started.statusCode).toBe(200);
    expect(started.body).toBe('pdf');
    // Its value is the download's size in bytes.
    expect(started.headers['set-cookie']).toBe('sf-dl-abcdef0123456789=3; Path=/; Max-Age=300; SameSite=Strict');
    // A zip's is its exact length, known before its first byte.
    const two = await link(['/report.pdf', '/gone.txt']);
    const zip = await t.app.inject({ method: 'GET', url: `${two.data.url}&notify=0123456789abcdef` });
    expect(zip.statusCode).toBe(200);
    expect(zip.rawPayload.length).toBeGreaterThan(0);
    expect(zip.headers['set-cookie']).toBe(
      `sf-dl-0123456789abcdef=${zip.rawPayload.length}; Path=/; Max-Age=300; SameSite=Strict`,
    );

    // The file goes after its link was made: the browser's navigation answers the 404 envelope.
    const soon = await link(['/gone.txt']);
    rmSync(join(dir, 'gone.txt'));
    const failed = await t.app.inject({ method: 'GET', url: `${soon.data.url}&notify=abcdef0123456789` });
    expect(failed.statusCode).toBe(404);
    expect(failed.headers['set-cookie']).toBeUndefined();
    expect(JSON.parse(failed.body)).toMatchObject({ code: Code.NOT_FOUND, msg: 'The path does not exist.' });

    // The nonce names a cookie: nothing else is taken.
    const bad = await t.app.inject({ method: 'GET', url: `${ok.data.url}&notify=a%3Bb%3Dc` });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['set-cookie']).toBeUndefined();
  });
});
