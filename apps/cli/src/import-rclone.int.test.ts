import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMULATED_CLIENTS,
  GoogleDriveEmulator,
  OAuthServer,
  run,
  startApacheWebdav,
  startS3rver,
  startSshd,
  startVsftpd,
  type FtpServer,
  type S3rverServer,
  type SshServer,
  type WebdavServer,
} from '@skyferry/testing';
import { runBin } from './bin.testing.ts';

// An rclone.conf written by rclone itself (`rclone config create`, passwords obscured by rclone)
// holding every kind Skyferry imports, imported by the `skyferry` bin, then a copy through each
// imported remote to real servers on 127.0.0.1, checked with `rclone check` on the same rclone.conf.

let dir: string;
let s3: S3rverServer;
let ssh: SshServer;
let dav: WebdavServer;
let ftp: FtpServer;
let oauth: OAuthServer;
let drive: GoogleDriveEmulator;

const ENV = () => ({
  ...process.env,
  RCLONE_CONFIG: join(dir, 'rclone.conf'),
  SKYFERRY_CONFIG: join(dir, 'remotes.json'),
  SKYFERRY_STATE_DIR: join(dir, 'state'),
  // rclone's S3 cannot load a CA bundle into its transport (the machine may set one).
  AWS_CA_BUNDLE: '',
});

const skyferry = (args: string[]) => runBin(args, { cwd: dir, env: ENV() });

const rclone = (...args: string[]) => run('rclone', args, { env: ENV() });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-import-rclone-'));
  [s3, ssh, dav, ftp] = await Promise.all([
    startS3rver({ buckets: ['bucket'] }),
    startSshd(),
    startApacheWebdav(),
    startVsftpd(),
  ]);
  oauth = await new OAuthServer().start();
  oauth.registerClient({ ...EMULATED_CLIENTS.google, redirectUris: [] });
  drive = await new GoogleDriveEmulator({ oauth }).start();
  await writeFile(join(dir, 'key'), ssh.encryptedKey, { mode: 0o600 });
  const src = join(dir, 'src');
  await mkdir(join(src, 'sub'), { recursive: true });
  await writeFile(join(src, 'a.txt'), 'hello rclone users\n');
  await writeFile(join(src, 'sub', 'b.bin'), Buffer.alloc(70_000, 7));
  // Every remote made by rclone itself: each pass=, key_file_pass= obscured by rclone.
  const create = (name: string, type: string, ...kv: string[]) => rclone('config', 'create', name, type, ...kv);
  await create(
    'store',
    's3',
    'provider=Other',
    `access_key_id=${s3.accessKeyId}`,
    `secret_access_key=${s3.secretAccessKey}`,
    `endpoint=http://127.0.0.1:${s3.port}`,
    `region=${s3.region}`,
  );
  await create('dav', 'webdav', `url=${dav.url}`, 'vendor=other', `user=${dav.username}`, `pass=${dav.password}`);
  await create(
    'nas',
    'sftp',
    `host=${ssh.host}`,
    `port=${ssh.port}`,
    `user=${ssh.username}`,
    `key_file=${join(dir, 'key')}`,
    `key_file_pass=${ssh.passphrase}`,
  );
  await create('files', 'ftp', `host=${ftp.host}`, `port=${ftp.port}`, `user=${ftp.username}`, `pass=${ftp.password}`);
  await create('disk', 'local');
  await create('joined', 'union', 'upstreams=disk:/tmp');
  // A Drive token that has expired: the first call refreshes it with the client named here.
  const t = oauth.issueTokens('alice@example.com', EMULATED_CLIENTS.google.clientId, 'openid email');
  const token = JSON.stringify({
    access_token: t.access_token,
    token_type: 'Bearer',
    refresh_token: t.refresh_token,
    expiry: new Date(Date.now() - 60_000).toISOString(),
  });
  await create(
    'gdrive',
    'drive',
    `client_id=${EMULATED_CLIENTS.google.clientId}`,
    `client_secret=${EMULATED_CLIENTS.google.clientSecret}`,
    `token_url=${oauth.tokenUrl}`,
    `token=${token}`,
    'config_refresh_token=false',
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([s3?.stop(), ssh?.stop(), dav?.stop(), ftp?.stop(), drive?.close(), oauth?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('skyferry remotes import-rclone', () => {
  it("imports every supported remote of rclone's own file, with obscured passwords revealed; copies through each", async () => {
    const conf = await readFile(join(dir, 'rclone.conf'), 'utf8');
    // rclone obscured them: the clear passwords are not in its file.
    expect(conf).not.toContain(`pass = ${dav.password}\n`);
    expect(conf).not.toContain(ssh.passphrase);

    const dry = await skyferry(['remotes', 'import-rclone', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('Dry run, nothing written: 6 remotes would import');
    await expect(stat(join(dir, 'remotes.json'))).rejects.toThrow();

    const imported = await skyferry(['remotes', 'import-rclone', '--json']);
    expect(imported.code, imported.err).toBe(0);
    const report = JSON.parse(imported.out) as {
      imported: Array<{ name: string; kind: string }>;
      skipped: Array<{ name: string; reason: string }>;
    };
    expect(report.imported.map((r) => [r.name, r.kind])).toEqual([
      ['store', 's3_compatible'],
      ['dav', 'webdav'],
      ['nas', 'sftp'],
      ['files', 'ftp'],
      ['disk', 'local'],
      ['gdrive', 'google_drive'],
    ]);
    expect(report.skipped).toEqual([{ name: 'joined', type: 'union', reason: 'Skyferry has no union backend' }]);
    const file = join(dir, 'remotes.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      remotes: Record<string, { credentials: Record<string, unknown> }>;
    };
    expect(saved.remotes.dav?.credentials.password).toBe(dav.password);
    expect(saved.remotes.files?.credentials.password).toBe(ftp.password);
    expect(saved.remotes.nas?.credentials.passphrase).toBe(ssh.passphrase);
    expect(saved.remotes.nas?.credentials.private_key).toBe(ssh.encryptedKey);

    // Importing again leaves the remotes alone, each named.
    const again = await skyferry(['remotes', 'import-rclone']);
    expect(again.out).toContain('skipped dav (rclone webdav): a remote of that name is in the remotes file already');

    // A copy through each imported remote; rclone, reading the same rclone.conf, finds the same files.
    const targets: Array<[string, string]> = [
      ['store', 'store:bucket/imported'],
      ['dav', 'dav:imported'],
      ['nas', 'nas:imported'],
      ['files', `files:${ftp.root === '/' ? '' : ftp.root}/imported`],
      ['disk', `disk:${join(dir, 'local-target')}`],
    ];
    for (const [name, target] of targets) {
      const copied = await skyferry(['copy', join(dir, 'src'), target, '--quiet']);
      expect(copied.code, `${name}: ${copied.out}${copied.err}`).toBe(0);
      // run() fails on a non-zero exit, with rclone's output.
      await rclone('check', join(dir, 'src'), `${target}/src`);
    }
  }, 180_000);

  it('an imported Drive remote refreshes its expired token with its own client and keeps the new one 0600', async () => {
    // rclone has no option for the API's address: the emulator's is added to the imported remote.
    const file = join(dir, 'remotes.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      remotes: Record<string, { credentials: Record<string, unknown> }>;
    };
    (saved.remotes.gdrive as { credentials: Record<string, unknown> }).credentials.api_url = drive.url;
    await writeFile(file, JSON.stringify(saved), { mode: 0o600 });
    const copied = await skyferry(['copy', join(dir, 'src'), 'gdrive:', '--quiet']);
    expect(copied.code, copied.err).toBe(0);
    const listed = await skyferry(['ls', 'gdrive:src/sub', '--json']);
    expect(JSON.parse(listed.out)).toMatchObject([{ name: 'b.bin', size: 70_000 }]);
    const state = join(dir, 'state', 'remotes', 'gdrive.json');
    expect((await stat(state)).mode & 0o777).toBe(0o600);
    const kept = JSON.parse(await readFile(state, 'utf8')) as { oauth_token: { access_token: string } };
    expect(kept.oauth_token.access_token).not.toBe(saved.remotes.gdrive?.credentials.access_token);
  }, 60_000);
});

describe('skyferry remotes import-rclone --to-server', () => {
  let server: ChildProcess;
  let url = '';
  let token = '';
  const email = 'rclone-user@example.com';
  const password = 'a long enough password';

  beforeAll(async () => {
    server = fork(resolve(import.meta.dirname, '../../server/src/main.ts'), [], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        SKYFERRY_DATA_DIR: join(dir, 'server-data'),
        SKYFERRY_LOCAL_ROOTS: join(dir, 'server-local'),
        SKYFERRY_WEB_DIST: join(dir, 'no-web'),
        // The test's servers are on loopback, which the server refuses to reach unless allowed.
        SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true',
        LOG_LEVEL: 'warn',
        DATABASE_URL: '',
        REDIS_URL: '',
      },
      execArgv: [],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    url = await new Promise<string>((done, fail) => {
      server.once('message', (m) => done(String((m as { url: string }).url)));
      server.once('exit', (code) => fail(new Error(`the server exited with ${code}`)));
    });
    const res = await fetch(`${url}/api/account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    token = ((await res.json()) as { data: { access_token: string } }).data.access_token;
  }, 60_000);

  afterAll(async () => {
    if (server?.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
  });

  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { data: T }).data;
  };

  it('connects each form remote as a cloud of the account, checked by the server, and says why the others were not', async () => {
    const env = { ...ENV(), SKYFERRY_EMAIL: email, SKYFERRY_PASSWORD: password };
    const ran = await runBin(['remotes', 'import-rclone', '--to-server', url, '--json'], { cwd: dir, env });
    expect(ran.code, ran.err).toBe(0);
    const report = JSON.parse(ran.out) as {
      to: string;
      imported: Array<{ name: string; kind: string }>;
      skipped: Array<{ name: string; reason: string }>;
    };
    expect(report.to).toBe(url);
    expect(
      report.imported.map((r) => [r.name, r.kind]),
      JSON.stringify(report.skipped),
    ).toEqual([
      ['dav', 'webdav'],
      ['nas', 'sftp'],
      ['files', 'ftp'],
    ]);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.name, s.reason]));
    expect(Object.keys(reasons).sort()).toEqual(['disk', 'gdrive', 'joined', 'store']);
    expect(reasons.gdrive).toContain("connect it in Skyferry's web app");
    // The server's own answers: a folder of the server outside the folders it allows, and an S3
    // remote for every bucket where a cloud is one bucket.
    expect(reasons.disk).toContain('refused it: This folder is outside the folders the server allows');
    expect(reasons.store).toContain('refused it: Bucket Name cannot be empty');
    const { clouds } = await api<{ clouds: Array<{ cloud_alias_name: string; cloud_name: string }> }>(
      '/api/v2/clouds/me',
    );
    expect(clouds.map((c) => [c.cloud_alias_name, c.cloud_name]).sort()).toEqual(
      [
        ['dav', 'webdav'],
        ['files', 'ftp'],
        ['nas', 'sftp'],
      ].sort(),
    );
    // The session the import opened was ended: only the test's own remains.
    expect((await api<{ items: unknown[] }>('/api/account/sessions')).items).toHaveLength(1);
  }, 120_000);

  it('refuses a wrong password, a missing account, and plain http to another machine, before sending any credential', async () => {
    const wrong = await runBin(['remotes', 'import-rclone', '--to-server', url], {
      cwd: dir,
      env: { ...ENV(), SKYFERRY_EMAIL: email, SKYFERRY_PASSWORD: 'not the password' },
    });
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('signing in to');
    const none = await runBin(['remotes', 'import-rclone', '--to-server', url], { cwd: dir, env: ENV() });
    expect(none.code).toBe(2);
    expect(none.err).toContain('set SKYFERRY_TOKEN, or SKYFERRY_EMAIL and SKYFERRY_PASSWORD');
    const plain = await runBin(['remotes', 'import-rclone', '--to-server', 'http://skyferry.example.com'], {
      cwd: dir,
      env: { ...ENV(), SKYFERRY_TOKEN: token },
    });
    expect(plain.code).toBe(2);
    expect(plain.err).toContain('use https');
  }, 60_000);
});
