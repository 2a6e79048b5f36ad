/**
 * The app registry and app tokens over HTTP (issue 37): first-party apps built in, nothing
 * external until the operator registers it, usage and "my apps", and tokens that reach only the
 * files the user opened with an app (read; write for the editor), with a conflict check on save.
 */
import { readFileSync, writeFileSync, utimesSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, FIRST_PARTY_APP_IDS, type AppFileInfo, type AppTokenData, type EcologyApp } from '@skyferry/contract';
import { STACKS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, writeTree } from './support/tasks.ts';

const EXTERNAL = {
  name: 'Sketch pad',
  description: 'Draw on pictures',
  url: 'https://sketch.example.com/app/',
  functions: [{ name: 'Draw', action: 'edit', extensions: ['png', 'jpg'] }],
};

for (const cfg of STACKS) {
  describe(`the app registry and app tokens [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    let operator: SignedUpUser;
    let user: SignedUpUser;
    let dir: string;
    let cloudId: string;

    beforeAll(async () => {
      t = await startTestApp({ dialect: cfg.dialect });
      operator = await t.signUp();
      user = await t.signUp(undefined, undefined, { operator: false });
      dir = t.makeLocalFolder();
      writeTree(dir, {
        'notes/a.md': '# A\n\nfirst version\n',
        'notes/b.md': '# B\n',
        'notes/secret.txt': 'not for the app',
      });
      cloudId = (await connectLocal(call, operator.headers, dir)).id;
    });
    afterAll(async () => {
      await t?.close();
    });

    const appHeaders = (token: string) => ({ authorization: `Bearer ${token}` });
    const tokenFor = async (appId: number, paths: string[], headers = operator.headers) =>
      call<AppTokenData>('POST', '/ecology/v1/app-tokens', {
        headers,
        body: { app_id: appId, files: paths.map((path) => ({ cloud_id: cloudId, path })) },
      });

    it('lists the first-party apps, and nothing external by default', async () => {
      const res = await call<{ items: EcologyApp[] }>('GET', '/ecology/v1/apps?show_office=1');
      expect(res.code).toBe(0);
      expect(res.data.items.map((a) => a.app_id)).toEqual([
        FIRST_PARTY_APP_IDS.viewer,
        FIRST_PARTY_APP_IDS.editor,
        FIRST_PARTY_APP_IDS.converter,
      ]);
      expect(res.data.items.every((a) => a.first_party && a.origin === 'null')).toBe(true);
      const viewer = res.data.items[0] as EcologyApp;
      expect(viewer.functions.flatMap((f) => f.extensions)).toEqual(
        expect.arrayContaining(['jpg', 'pdf', 'md', 'mp4']),
      );
      const detail = await call<EcologyApp>('GET', `/ecology/v1/apps/${FIRST_PARTY_APP_IDS.editor}`);
      expect(detail.data.name).toBe('Editor');
      expect((await call('GET', '/ecology/v1/apps/4242')).status).toBe(404);
    });

    it('lets only the operator register an external app, on its own origin, and frames it', async () => {
      const refused = await call('POST', '/api/operator/apps', { headers: user.headers, body: EXTERNAL });
      expect(refused.code).toBe(Code.OPERATOR_REQUIRED);
      const elsewhere = await call('POST', '/api/operator/apps', {
        headers: operator.headers,
        body: { ...EXTERNAL, functions: [{ ...EXTERNAL.functions[0], url: 'https://evil.example.net/x' }] },
      });
      expect(elsewhere.status).toBe(400);
      const made = await call<EcologyApp>('POST', '/api/operator/apps', { headers: operator.headers, body: EXTERNAL });
      expect(made.code).toBe(0);
      expect(made.data.app_id).toBeGreaterThanOrEqual(100);
      expect(made.data.origin).toBe('https://sketch.example.com');
      const office = await call<EcologyApp>('POST', '/api/operator/apps', {
        headers: operator.headers,
        body: { ...EXTERNAL, name: 'Office', url: 'https://office.example.com/', state: 2 },
      });
      const all = await call<{ items: EcologyApp[] }>('GET', '/ecology/v1/apps?show_office=1');
      expect(all.data.items.map((a) => a.app_id)).toEqual(
        expect.arrayContaining([made.data.app_id, office.data.app_id]),
      );
      const plain = await call<{ items: EcologyApp[] }>('GET', '/ecology/v1/apps');
      expect(plain.data.items.map((a) => a.app_id)).not.toContain(office.data.app_id);
      // Pages may frame the registered origins, and no others.
      const page = await t.app.inject({ method: 'GET', url: '/api/v2/init' });
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toMatch(/frame-src 'self' [^;]*https:\/\/sketch\.example\.com/);
      expect(csp).not.toContain('evil.example.net');
      const removed = await call('DELETE', `/api/operator/apps/${office.data.app_id}`, { headers: operator.headers });
      expect(removed.code).toBe(0);
      expect((await call('GET', `/ecology/v1/apps/${office.data.app_id}`)).status).toBe(404);
    });

    it('records which apps a signed-in user opened; visitors are asked to log in', async () => {
      expect(
        (await call('PUT', `/ecology/v1/apps/usage/${FIRST_PARTY_APP_IDS.viewer}`, { headers: user.headers })).code,
      ).toBe(0);
      await call('PUT', `/ecology/v1/apps/usage/${FIRST_PARTY_APP_IDS.editor}`, { headers: user.headers });
      await call('PUT', `/ecology/v1/apps/usage/${FIRST_PARTY_APP_IDS.editor}`, { headers: user.headers });
      const mine = await call<{ items: Array<EcologyApp & { uses: number }> }>('GET', '/ecology/v1/apps/me', {
        headers: user.headers,
      });
      expect(mine.data.items.map((a) => [a.app_id, a.uses])).toEqual([
        [FIRST_PARTY_APP_IDS.editor, 2],
        [FIRST_PARTY_APP_IDS.viewer, 1],
      ]);
      expect((await call('PUT', '/ecology/v1/apps/usage/4242', { headers: user.headers })).status).toBe(404);
      const visitor = await t.visitor();
      expect((await call('GET', '/ecology/v1/apps/me', { headers: visitor.headers })).code).toBe(Code.UNAUTHENTICATED);
      expect((await call('PUT', '/ecology/v1/apps/usage/1', { headers: visitor.headers })).code).toBe(
        Code.UNAUTHENTICATED,
      );
    });

    it('hands an app a token that reaches the files it was given and nothing else', async () => {
      const issued = await tokenFor(FIRST_PARTY_APP_IDS.viewer, ['/notes/a.md']);
      expect(issued.code).toBe(0);
      const { token, files } = issued.data;
      expect(token).not.toBe(operator.accessToken);
      expect(files).toEqual([{ file_id: expect.any(String), name: 'a.md', writable: false }]);
      const fileId = files[0]?.file_id as string;
      const listed = await call<{ files: unknown[] }>('GET', '/ecology/v1/app/files', { headers: appHeaders(token) });
      expect(listed.data.files).toHaveLength(1);
      const content = await t.app.inject({
        method: 'GET',
        url: `/ecology/v1/app/files/${fileId}/content?app_token=${encodeURIComponent(token)}`,
      });
      expect(content.statusCode).toBe(200);
      expect(content.body).toBe('# A\n\nfirst version\n');
      expect(content.headers['access-control-allow-origin']).toBe('*');
      const range = await t.app.inject({
        method: 'GET',
        url: `/ecology/v1/app/files/${fileId}/content`,
        headers: { ...appHeaders(token), range: 'bytes=2-2' },
      });
      expect(range.statusCode).toBe(206);
      expect(range.body).toBe('A');
      // Not another file, not the account's calls, not with a made-up id.
      expect((await call('GET', '/ecology/v1/app/files/nope', { headers: appHeaders(token) })).status).toBe(404);
      const asAccount = await call('POST', '/api/cloud-manager/list', {
        headers: appHeaders(token),
        body: { cloud_id: cloudId, path: '/notes' },
      });
      expect(asAccount.code).toBe(Code.UNAUTHENTICATED);
      // The account token is not an app token either.
      expect((await call('GET', '/ecology/v1/app/files', { headers: operator.headers })).code).toBe(
        Code.UNAUTHENTICATED,
      );
      // A viewer reads only.
      const put = await t.app.inject({
        method: 'PUT',
        url: `/ecology/v1/app/files/${fileId}/content`,
        headers: { ...appHeaders(token), 'content-type': 'text/plain' },
        payload: 'overwritten',
      });
      expect(JSON.parse(put.body).code).toBe(Code.FORBIDDEN);
      expect(readFileSync(join(dir, 'notes/a.md'), 'utf8')).toContain('first version');
    });

    it('takes the embedded-app host client’s headers, and lets an app on another origin send them', async () => {
      const hostHeaders = {
        'x-client-type': '1',
        'x-client-serial': '6f1c7a52-3f4e-4a55-9c1e-0a8c2b7d9e10',
        'x-app-key': 'skyferry-web',
        'x-product-id': '1',
        'x-product-version': '1.0.0',
        'x-language': 'en-us',
        'content-type': 'application/json',
      };
      const apps = await t.app.inject({
        method: 'GET',
        url: '/ecology/v1/apps/me',
        headers: { ...operator.headers, ...hostHeaders },
      });
      expect([apps.statusCode, JSON.parse(apps.body).code]).toEqual([200, 0]);
      // The usage call has no payload, yet says json like every host call.
      const usage = await t.app.inject({
        method: 'PUT',
        url: `/ecology/v1/apps/usage/${FIRST_PARTY_APP_IDS.viewer}`,
        headers: { ...operator.headers, ...hostHeaders },
      });
      expect([usage.statusCode, JSON.parse(usage.body).code]).toEqual([200, 0]);
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/ecology/v1/app/files',
        headers: {
          origin: 'https://sketch.example.com',
          'access-control-request-method': 'GET',
          'access-control-request-headers': Object.keys(hostHeaders).join(','),
        },
      });
      expect(preflight.statusCode).toBe(204);
      const allowed = String(preflight.headers['access-control-allow-headers']).split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining([...Object.keys(hostHeaders), 'authorization', 'range']));
    });

    it('refuses files of other accounts and of types the app does not take', async () => {
      expect((await tokenFor(FIRST_PARTY_APP_IDS.viewer, ['/notes/a.md'], user.headers)).status).toBe(404);
      expect((await tokenFor(FIRST_PARTY_APP_IDS.converter, ['/notes/a.md'])).status).toBe(400);
      expect((await tokenFor(4242, ['/notes/a.md'])).status).toBe(404);
    });

    it('saves an edit with the conflict check, saves as a new file, and ends on revoke and logout', async () => {
      const session = await t.signUp(operator.email, operator.password).catch(() => undefined);
      expect(session).toBeUndefined(); // the e-mail is taken: sign in instead
      const login = await call<{ access_token: string }>('POST', '/api/account/login', {
        body: { email: operator.email, password: operator.password },
      });
      const headers = { authorization: `Bearer ${login.data.access_token}` };
      const issued = await tokenFor(FIRST_PARTY_APP_IDS.editor, ['/notes/a.md'], headers);
      const { token } = issued.data;
      const fileId = issued.data.files[0]?.file_id as string;
      expect(issued.data.files[0]?.writable).toBe(true);
      const info = await call<AppFileInfo>('GET', `/ecology/v1/app/files/${fileId}`, { headers: appHeaders(token) });
      expect(info.data.size).toBe(19);
      // Someone changes the file meanwhile: the save is refused and the other change kept.
      writeFileSync(join(dir, 'notes/a.md'), '# A\n\nchanged elsewhere\n');
      utimesSync(join(dir, 'notes/a.md'), new Date(), new Date(Date.now() + 5000));
      const stale = await t.app.inject({
        method: 'PUT',
        url: `/ecology/v1/app/files/${fileId}/content`,
        headers: { ...appHeaders(token), 'content-type': 'text/markdown', 'if-match': info.data.etag },
        payload: '# A\n\nmy edit\n',
      });
      expect(stale.statusCode).toBe(409);
      expect(JSON.parse(stale.body).code).toBe(Code.CONFLICT);
      expect(readFileSync(join(dir, 'notes/a.md'), 'utf8')).toContain('changed elsewhere');
      const fresh = await call<AppFileInfo>('GET', `/ecology/v1/app/files/${fileId}`, { headers: appHeaders(token) });
      const saved = await t.app.inject({
        method: 'PUT',
        url: `/ecology/v1/app/files/${fileId}/content`,
        headers: { ...appHeaders(token), 'content-type': 'text/markdown', 'if-match': fresh.data.etag },
        payload: '# A\n\nmy edit\n',
      });
      expect(JSON.parse(saved.body).code).toBe(0);
      expect(readFileSync(join(dir, 'notes/a.md'), 'utf8')).toBe('# A\n\nmy edit\n');
      // Save as: a new file beside it, never over an existing one.
      const taken = await t.app.inject({
        method: 'POST',
        url: `/ecology/v1/app/files/${fileId}/save-as?name=b.md`,
        headers: { ...appHeaders(token), 'content-type': 'text/markdown' },
        payload: 'x',
      });
      expect(JSON.parse(taken.body).code).toBe(Code.ALREADY_EXISTS);
      expect(readFileSync(join(dir, 'notes/b.md'), 'utf8')).toBe('# B\n');
      const copy = await t.app.inject({
        method: 'POST',
        url: `/ecology/v1/app/files/${fileId}/save-as?name=${encodeURIComponent('a copy.md')}`,
        headers: { ...appHeaders(token), 'content-type': 'text/markdown' },
        payload: 'the copy',
      });
      const copyInfo = JSON.parse(copy.body) as { code: number; data: AppFileInfo };
      expect(copyInfo.code).toBe(0);
      expect(readFileSync(join(dir, 'notes/a copy.md'), 'utf8')).toBe('the copy');
      expect((await call('GET', '/ecology/v1/app/files', { headers: appHeaders(token) })).data).toMatchObject({
        files: [{ name: 'a.md' }, { name: 'a copy.md' }],
      });
      // Revoked by someone else: nothing happens; by its owner: it stops at once.
      await call('POST', '/ecology/v1/app-tokens/revoke', { headers: user.headers, body: { token } });
      expect((await call('GET', '/ecology/v1/app/files', { headers: appHeaders(token) })).code).toBe(0);
      await call('POST', '/ecology/v1/app-tokens/revoke', { headers, body: { token } });
      expect((await call('GET', '/ecology/v1/app/files', { headers: appHeaders(token) })).code).toBe(
        Code.UNAUTHENTICATED,
      );
      // Logging out ends every app token of the session.
      const second = (await tokenFor(FIRST_PARTY_APP_IDS.viewer, ['/notes/b.md'], headers)).data.token;
      expect((await call('GET', '/ecology/v1/app/files', { headers: appHeaders(second) })).code).toBe(0);
      await call('POST', '/api/account/logout', { headers });
      expect((await call('GET', '/ecology/v1/app/files', { headers: appHeaders(second) })).code).toBe(
        Code.UNAUTHENTICATED,
      );
    });

    it('converts a picture into another format beside it, resized', async () => {
      const png = await sharp({
        create: { width: 400, height: 200, channels: 3, background: { r: 200, g: 30, b: 30 } },
      })
        .png()
        .toBuffer();
      writeFileSync(join(dir, 'notes/red.png'), png);
      const issued = await tokenFor(FIRST_PARTY_APP_IDS.converter, ['/notes/red.png']);
      const fileId = issued.data.files[0]?.file_id as string;
      const out = await call<AppFileInfo>('POST', `/ecology/v1/app/files/${fileId}/convert`, {
        headers: appHeaders(issued.data.token),
        body: { format: 'webp', max_side: 100, name: 'red small.webp' },
      });
      expect(out.code).toBe(0);
      expect(out.data.name).toBe('red small.webp');
      const meta = await sharp(readFileSync(join(dir, 'notes/red small.webp'))).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', 100, 50]);
      const avif = await call<AppFileInfo>('POST', `/ecology/v1/app/files/${fileId}/convert`, {
        headers: appHeaders(issued.data.token),
        body: { format: 'avif', name: 'red.avif' },
      });
      expect(avif.code).toBe(0);
      expect(existsSync(join(dir, 'notes/red.avif'))).toBe(true);
      // Not a picture: a clear 400, nothing written.
      writeFileSync(join(dir, 'notes/broken.jpg'), 'not a jpeg');
      const broken = await tokenFor(FIRST_PARTY_APP_IDS.converter, ['/notes/broken.jpg']);
      const bad = await call('POST', `/ecology/v1/app/files/${broken.data.files[0]?.file_id}/convert`, {
        headers: appHeaders(broken.data.token),
        body: { format: 'png', name: 'broken.png' },
      });
      expect(bad.status).toBe(400);
      expect(existsSync(join(dir, 'notes/broken.png'))).toBe(false);
    });
  });
}
