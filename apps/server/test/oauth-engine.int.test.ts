import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CreateTaskData, type ServerTask, type TaskDetail } from '@skyferry/contract';
import { ENCODINGS, NameEncoder, openProvider, type Provider } from '@skyferry/providers';
import { EMULATED_CLIENTS, exportBytes, GOOGLE_DOC_MIME } from '@skyferry/testing';
import type { SignedUpUser } from './support/app.ts';
import { connectOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';
import { caller, waitForState } from './support/tasks.ts';

// Tasks through the engine between OAuth clouds, each on its local emulator (built from the
// services' published documentation), connected through the OAuth flow: a migration from Google
// Drive to OneDrive and a two-way sync between Dropbox and Box. Every file is then read back from
// the emulators' own storage and compared byte for byte with its source.

const CI = Boolean(process.env.CI);
const MiB = 1024 * 1024;

function pattern(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** Byte-for-byte comparison of two trees (relative path -> content). */
function sameTree(a: Map<string, Buffer>, b: Map<string, Buffer>): void {
  expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
  for (const [rel, data] of a) expect(md5(b.get(rel)!), rel).toBe(md5(data));
}

describe('engine runs between emulated OAuth clouds', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;
  const call = caller(() => app.t);

  beforeAll(async () => {
    app = await startOAuthTestApp({ env: { SKYFERRY_WORKERS: '2' } });
    user = await app.t.signUp();
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  async function runTask(body: Record<string, unknown>): Promise<TaskDetail> {
    const res = await call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body });
    if (res.code !== 0) throw new Error(`task: ${res.status} ${res.msg}`);
    const task = res.data.task as ServerTask;
    return (await waitForState(call, user.headers, task.id, undefined, 180_000)).task;
  }

  it('migrates a Google Drive folder to OneDrive: every file verified, Docs exported to Office, odd names kept', async () => {
    const { emu } = app;
    const gUser = 'drive-owner@example.com';
    const odUser = 'onedrive-owner@example.com';
    const drive = emu.googleDrive;
    const projects = drive.seed(gUser, drive.rootId(gUser), 'Projects');
    const sub = drive.seed(gUser, projects.id, 'sub');
    drive.seed(gUser, projects.id, 'empty');
    drive.seed(gUser, projects.id, 'readme.txt', { content: Buffer.from('read me'), mimeType: 'text/plain' });
    drive.seed(gUser, projects.id, 'why? not: "quoted".txt', { content: pattern(5000, 1) });
    drive.seed(gUser, sub.id, 'photo.jpg', { content: pattern(300_000, 2), mimeType: 'image/jpeg' });
    // Larger than OneDrive's simple upload: goes through an upload session in 10 MiB fragments.
    drive.seed(gUser, sub.id, 'video.mp4', { content: pattern((CI ? 11 : 24) * MiB + 123, 3), mimeType: 'video/mp4' });
    const doc = drive.seed(gUser, projects.id, 'Plan', { mimeType: GOOGLE_DOC_MIME, docText: 'the plan, as text' });

    const source = await connectOAuth(app, user.headers, 'google_drive', gUser, 'Drive');
    const target = await connectOAuth(app, user.headers, 'onedrive', odUser, 'OneDrive');
    // The run also meets an expired access token and a throttled Graph.
    emu.googleDrive.expireTokenNext();
    emu.oneDrive.rateLimitNext(2, 1);
    const fragmentsBefore = emu.oneDrive.fragmentPuts;
    const refreshesBefore = emu.oauth.tokenCalls.refresh_token ?? 0;

    const task = await runTask({
      task_type: 0,
      from_cloud: { cloud_id: source.id, paths: ['/Projects'] },
      to_cloud: { cloud_id: target.id, path: '/Backup' },
    });
    expect(task.state, JSON.stringify(task.result_list)).toBe(0);
    expect(task.result).toMatchObject({ outcome: 'success', failed: 0, added: 5 });

    const names = new NameEncoder(ENCODINGS.onedrive);
    const landed = new Map(
      [...emu.oneDrive.filesUnder(odUser, '/Backup/Projects')].map(([rel, b]) => [names.decodePath(rel), b]),
    );
    const expected = drive.filesUnder(gUser, '/Projects');
    expected.set(
      '/Plan.docx',
      exportBytes(doc, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
    );
    sameTree(expected, landed);
    expect(emu.oneDrive.fragmentPuts - fragmentsBefore).toBeGreaterThanOrEqual(2);
    expect(emu.oneDrive.faultsServed('rate_limit').length).toBeGreaterThanOrEqual(2);
    expect((emu.oauth.tokenCalls.refresh_token ?? 0) - refreshesBefore).toBeGreaterThanOrEqual(1);
  }, 240_000);

  it('syncs Dropbox and Box both ways: adds, changes and deletions flow across, every file verified', async () => {
    const { emu } = app;
    const dUser = 'dropbox-owner@example.com';
    const bUser = 'box-owner@example.com';
    emu.dropbox.seed(dUser, '/Shared/x.txt', Buffer.from('x from dropbox'));
    emu.dropbox.seed(dUser, '/Shared/docs/y.bin', pattern(200_000, 4));
    emu.dropbox.seed(dUser, '/Shared/big.bin', pattern((CI ? 9 : 20) * MiB, 5));
    emu.box.seed(bUser, '/Shared/z.txt', Buffer.from('z from box'));
    emu.box.seed(bUser, '/Shared/deep/er/w.bin', pattern(70_000, 6));

    const dropbox = await connectOAuth(app, user.headers, 'dropbox', dUser, 'Dropbox');
    const box = await connectOAuth(app, user.headers, 'box', bUser, 'Box');
    const sync = {
      task_type: 1,
      sync_mode: 'two_way',
      from_cloud: { cloud_id: dropbox.id, paths: ['/Shared'] },
      to_cloud: { cloud_id: box.id, path: '/Shared' },
    };
    const first = await runTask(sync);
    expect(first.state, JSON.stringify(first.result_list)).toBe(0);
    sameTree(emu.dropbox.filesUnder(dUser, '/Shared'), emu.box.filesUnder(bUser, '/Shared'));
    expect([...emu.box.filesUnder(bUser, '/Shared').keys()].sort()).toEqual([
      '/big.bin',
      '/deep/er/w.bin',
      '/docs/y.bin',
      '/x.txt',
      '/z.txt',
    ]);

    // The user changes both sides between runs (through the services' own APIs).
    const direct = async (
      kind: string,
      who: string,
      url: string,
      client: { clientId: string; clientSecret: string },
    ): Promise<Provider> => {
      const tok = emu.oauth.issueTokens(who, client.clientId, '');
      return openProvider(
        kind,
        {
          access_token: tok.access_token,
          refresh_token: tok.refresh_token,
          api_url: url,
          token_url: emu.oauth.tokenUrl,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
        {},
      );
    };
    const d = await direct('dropbox', dUser, emu.dropbox.url, EMULATED_CLIENTS.dropbox);
    const b = await direct('box', bUser, emu.box.url, EMULATED_CLIENTS.box);
    const changed = Buffer.from('x changed on box, and longer than before');
    await b.put('/Shared/x.txt', Readable.from([changed]), {
      size: changed.length,
      modTime: new Date(Date.now() + 60_000),
    });
    await d.remove('/Shared/docs/y.bin');
    const added = pattern(123_456, 7);
    await d.put('/Shared/new/added.bin', Readable.from([added]), { size: added.length });
    await b.remove('/Shared/z.txt');

    const res = await call<ServerTask>('GET', `/api/tasks/run/${first.id}`, { headers: user.headers });
    expect(res.code).toBe(0);
    const second = (await waitForState(call, user.headers, first.id, undefined, 180_000)).task;
    expect(second.state, JSON.stringify(second.result_list)).toBe(0);
    const dropboxSide = emu.dropbox.filesUnder(dUser, '/Shared');
    const boxSide = emu.box.filesUnder(bUser, '/Shared');
    sameTree(dropboxSide, boxSide);
    expect([...boxSide.keys()].sort()).toEqual(['/big.bin', '/deep/er/w.bin', '/new/added.bin', '/x.txt']);
    expect(dropboxSide.get('/x.txt')?.toString()).toBe(changed.toString());
    expect(boxSide.get('/new/added.bin')?.equals(added)).toBe(true);
    // Box keeps what the sync deleted in its trash.
    expect(emu.box.trashOf(bUser).map((i) => i.name)).toContain('y.bin');
  }, 240_000);

  it('lists the clouds it used, all still authorized', async () => {
    const res = await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me', { headers: user.headers });
    expect(res.data.clouds.map((c) => [c.cloud_name, c.status]).sort()).toEqual([
      ['box', 'authorized'],
      ['dropbox', 'authorized'],
      ['google_drive', 'authorized'],
      ['onedrive', 'authorized'],
    ]);
  });

  it('a grant revoked between runs fails the next run with auth_expired and marks that cloud expired, not deleted', async () => {
    const { emu } = app;
    const rUser = 'revoked-owner@example.com';
    emu.dropbox.seed(rUser, '/Gone/a.txt', Buffer.from('a'));
    const revoked = await connectOAuth(app, user.headers, 'dropbox', rUser, 'Revoked');
    const listClouds = async () =>
      (await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me', { headers: user.headers })).data.clouds;
    const box = (await listClouds()).find((c) => c.cloud_name === 'box')!;
    const first = await runTask({
      task_type: 0,
      from_cloud: { cloud_id: revoked.id, paths: ['/Gone'] },
      to_cloud: { cloud_id: box.id, path: '/FromRevoked' },
    });
    expect(first.state, JSON.stringify(first.result_list)).toBe(0);
    // The user withdraws Skyferry's access at Dropbox; every access token runs out meanwhile.
    emu.oauth.revokeUser(rUser);
    emu.oauth.expireAccessTokens();
    const res = await call<ServerTask>('GET', `/api/tasks/run/${first.id}`, { headers: user.headers });
    expect(res.code).toBe(0);
    const second = (await waitForState(call, user.headers, first.id, undefined, 180_000)).task;
    expect(second.result?.outcome).toBe('failed');
    expect(second.result?.error?.code).toBe('auth_expired');
    const after = await listClouds();
    expect(after.find((c) => c.id === revoked.id)).toMatchObject({ status: 'expired', cloud_alias_name: 'Revoked' });
    // The other side refreshed its token and stays authorized.
    expect(after.find((c) => c.id === box.id)?.status).toBe('authorized');
  });

  it('creating a task from a cloud whose grant was revoked answers cloud_auth_expired and marks it expired', async () => {
    const { emu } = app;
    const rUser = 'revoked-before-create@example.com';
    emu.dropbox.seed(rUser, '/Here/a.txt', Buffer.from('a'));
    const revoked = await connectOAuth(app, user.headers, 'dropbox', rUser, 'Revoked early');
    const listClouds = async () =>
      (await call<{ clouds: Cloud[] }>('GET', '/api/v2/clouds/me', { headers: user.headers })).data.clouds;
    const box = (await listClouds()).find((c) => c.cloud_name === 'box')!;
    emu.oauth.revokeUser(rUser);
    emu.oauth.expireAccessTokens();
    for (const dryRun of [true, false]) {
      const res = await call('POST', '/api/tasks', {
        headers: user.headers,
        body: {
          task_type: 0,
          from_cloud: { cloud_id: revoked.id, paths: ['/Here'] },
          to_cloud: { cloud_id: box.id, path: '/FromRevokedEarly' },
          dry_run: dryRun,
        },
      });
      expect(res.status, `dry_run ${dryRun}`).toBe(401);
      expect(res.code, `dry_run ${dryRun}`).toBe(Code.CLOUD_AUTH_EXPIRED);
      expect(res.data).toMatchObject({ cloud_id: revoked.id });
    }
    const after = await listClouds();
    expect(after.find((c) => c.id === revoked.id)).toMatchObject({
      status: 'expired',
      cloud_alias_name: 'Revoked early',
    });
    expect(after.find((c) => c.id === box.id)?.status).toBe('authorized');
  });
});
