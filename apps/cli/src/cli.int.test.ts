import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RCLONE_ENV, rcloneCheck } from '@skyferry/engine/testing';
import {
  run,
  startApacheWebdav,
  startLatencyProxy,
  startS3rver,
  startSshd,
  startVsftpd,
  waitFor,
  type FtpServer,
  type LatencyProxy,
  type S3rverServer,
  type SshServer,
  type WebdavServer,
} from '@skyferry/testing';
import { runBin, type Ran } from './bin.testing.ts';

// The `skyferry` command itself (the bin npm links, a child process) against real servers on
// 127.0.0.1: s3rver for S3, OpenSSH for SFTP, Apache for WebDAV, vsftpd for FTPS, with rclone (or
// the server's own folder) as the independent check of what landed.

let dir: string;
let s3: S3rverServer;
let ssh: SshServer;
let proxy: LatencyProxy;
let sshProxy: LatencyProxy;
let dav: WebdavServer;
let ftps: FtpServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-cli-int-'));
  [s3, ssh, dav, ftps] = await Promise.all([
    startS3rver({ buckets: ['bucket'] }),
    startSshd(),
    startApacheWebdav(),
    startVsftpd({ tls: true }),
  ]);
  // S3 behind 40 ms of round trip: slow enough to stop a run midway.
  proxy = await startLatencyProxy({ target: { host: '127.0.0.1', port: s3.port }, rttMs: 40 });
  sshProxy = await startLatencyProxy({ target: { host: ssh.host, port: ssh.port }, rttMs: 40 });
  const s3Creds = (port: number) => ({
    bucket: 'bucket',
    access_key_id: s3.accessKeyId,
    secret_access_key: { env: 'TEST_S3_SECRET' },
    endpoint: `http://127.0.0.1:${port}`,
    region: s3.region,
    path_style: true,
  });
  await writeFile(
    join(dir, 'remotes.json'),
    JSON.stringify({
      remotes: {
        store: { kind: 's3_compatible', credentials: s3Creds(s3.port) },
        far: { kind: 's3_compatible', credentials: s3Creds(proxy.port) },
        nas: {
          kind: 'sftp',
          credentials: { host: ssh.host, port: ssh.port, username: ssh.username, private_key: { env: 'TEST_SSH_KEY' } },
        },
        farnas: {
          kind: 'sftp',
          credentials: {
            host: '127.0.0.1',
            port: sshProxy.port,
            username: ssh.username,
            private_key: { env: 'TEST_SSH_KEY' },
          },
        },
        dav: {
          kind: 'webdav',
          credentials: { url: dav.url, username: dav.username, password: { env: 'TEST_DAV_PASSWORD' } },
        },
        ftps: {
          kind: 'ftp',
          credentials: {
            host: ftps.host,
            port: ftps.port,
            username: ftps.username,
            password: { env: 'TEST_FTP_PASSWORD' },
            secure: true,
            tls_fingerprint: ftps.certFingerprint256,
            root: ftps.root,
          },
        },
      },
    }),
    { mode: 0o600 },
  );
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await sshProxy?.stop();
  await Promise.all([s3?.stop(), ssh?.stop(), dav?.stop(), ftps?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const ENV = () => ({
  ...process.env,
  SKYFERRY_CONFIG: join(dir, 'remotes.json'),
  SKYFERRY_STATE_DIR: join(dir, 'state'),
  TEST_S3_SECRET: s3.secretAccessKey,
  TEST_SSH_KEY: ssh.privateKey,
  TEST_DAV_PASSWORD: dav.password,
  TEST_FTP_PASSWORD: ftps.password,
});

/** Runs `skyferry`; `during` gets the child while it runs (to stop it midway). */
const skyferry = (args: string[], during?: (child: ChildProcess) => void): Promise<Ran> =>
  runBin(args, { cwd: dir, env: ENV() }, during);

const s3Remote = (path: string) =>
  `:s3,provider=Other,env_auth=false,access_key_id=${s3.accessKeyId},secret_access_key=${s3.secretAccessKey},endpoint='http://127.0.0.1:${s3.port}',force_path_style=true:bucket/${path}`;

/** Objects s3rver holds below a key prefix (it keeps each as "<name>._S3rver_object"; folder markers have no name). */
async function objectsUnder(prefix: string): Promise<string[]> {
  try {
    const names = await readdir(join(s3.directory, 'bucket', prefix), { recursive: true });
    return names.filter((n) => /[^/]\._S3rver_object$/.test(n) && !n.endsWith('/._S3rver_object'));
  } catch {
    return [];
  }
}

async function makeFiles(folder: string, count: number, size: number): Promise<void> {
  await mkdir(folder, { recursive: true });
  for (let i = 0; i < count; i++)
    await writeFile(join(folder, `f${String(i).padStart(2, '0')}.bin`), randomBytes(size));
}

describe('skyferry against real servers', () => {
  it('copies a folder tree to S3 as rclone sees it, and lists it back', async () => {
    const src = join(dir, 'tree');
    await makeFiles(join(src, 'deep', 'er'), 3, 10_000);
    await makeFiles(src, 4, 300_000);
    const r = await skyferry(['copy', src, 'store:backup']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^success: 7 of 7 done .* 7 added/);
    const marks = await rcloneCheck(src, s3Remote('backup/tree'), { flags: ['--fast-list'] });
    expect([...marks.values()]).toEqual(Array(7).fill('='));

    // (s3rver's own listings miss folders holding only folders, so the deepest one is listed.)
    const ls = await skyferry(['ls', 'store:backup/tree/deep/er', '--json']);
    expect(ls.code).toBe(0);
    const entries = JSON.parse(ls.out) as { name: string; kind: string; size: number }[];
    expect(entries.map((e) => [e.name, e.kind, e.size])).toEqual([0, 1, 2].map((i) => [`f0${i}.bin`, 'file', 10_000]));

    // check agrees: every file the same by S3's MD5 against the one computed here; a file changed
    // here at the same size is then found by its hash.
    const same = await skyferry(['check', src, 'store:backup/tree']);
    expect(same.code).toBe(0);
    expect(same.out).toBe('No differences; 7 on both sides: 7 the same by hash.\n');
    await writeFile(join(src, 'deep', 'er', 'f01.bin'), randomBytes(10_000));
    const changed = await skyferry(['check', src, 'store:backup/tree']);
    expect(changed.code).toBe(1);
    expect(changed.out).toBe(
      '* deep/er/f01.bin: content differs (md5)\n1 difference; 7 on both sides: 6 the same by hash.\n',
    );
  });

  it.each([
    ['WebDAV (Apache)', 'dav', () => dav.dir],
    ['FTPS (vsftpd, pinned certificate)', 'ftps', () => ftps.dir],
  ])('syncs a tree to %s byte for byte; a second sync moves nothing', async (_name, remote, serverDir) => {
    const src = join(dir, `to-${remote}`);
    await makeFiles(join(src, 'sub'), 2, 50_000);
    await makeFiles(src, 3, 200_000);
    const first = await skyferry(['sync', src, `${remote}:mirror`, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ outcome: 'success', summary: { added: 5 } });
    const landed = join(serverDir(), 'mirror');
    for (const rel of ['f00.bin', 'f01.bin', 'f02.bin', 'sub/f00.bin', 'sub/f01.bin']) {
      expect(await readFile(join(landed, rel))).toEqual(await readFile(join(src, rel)));
    }
    const second = await skyferry(['sync', src, `${remote}:mirror`, '--json']);
    expect(JSON.parse(second.out)).toMatchObject({ outcome: 'success', transferredBytes: 0, summary: { skipped: 5 } });
  });

  it('a run killed midway (SIGKILL) finishes when started again, without copying finished files twice', async () => {
    const src = join(dir, 'resume');
    const count = 30;
    const size = 1536 * 1024; // above the small-file lane: --transfers 1 holds
    await makeFiles(src, count, size);
    // Every file is written again (--same-name overwrite): only the resume files tell finished ones apart.
    const args = ['copy', src, 'far:resumed', '--same-name', 'overwrite'];
    const first = await skyferry([...args, '--transfers', '1', '--quiet'], (child) => {
      void waitFor(
        async () => (await objectsUnder('resumed/resume')).length >= 4,
        'four objects landed',
        60_000,
        10,
      ).then(() => child.kill('SIGKILL'));
    });
    expect(first.signal).toBe('SIGKILL');
    const landed = (await objectsUnder('resumed/resume')).length;
    expect(landed).toBeGreaterThanOrEqual(4);
    expect(landed).toBeLessThan(count);

    const second = await skyferry([...args, '--transfers', '4', '--json']);
    expect(second.code).toBe(0);
    const result = JSON.parse(second.out) as {
      outcome: string;
      transferredBytes: number;
      summary: { resumed: number };
    };
    expect(result.outcome).toBe('success');
    // Every file recorded as finished is not copied again. With --transfers 1 two files are under
    // way at most (one sending while the one before waits for its answer and verification): only
    // those may have landed unrecorded.
    expect(result.summary.resumed).toBeGreaterThanOrEqual(landed - 2);
    expect(result.transferredBytes).toBe((count - result.summary.resumed) * size);
    const marks = await rcloneCheck(src, s3Remote('resumed/resume'), { flags: ['--fast-list'] });
    expect([...marks.values()]).toEqual(Array(count).fill('='));
  });

  it('Ctrl-C cancels cleanly: exit 130, no partial file visible, and the same command then finishes', async () => {
    const src = join(dir, 'cancel');
    await makeFiles(src, 20, 1536 * 1024);
    await run('rclone', ['copy', src, s3Remote('cancel-src'), '--fast-list'], { env: RCLONE_ENV });
    const out = join(dir, 'cancel-out');
    await mkdir(out);
    const files = async () => (await readdir(out, { recursive: true })).filter((n) => n.endsWith('.bin'));
    const stopped = await skyferry(['sync', 'far:cancel-src', out, '--transfers', '1'], (child) => {
      void waitFor(async () => (await files()).length >= 3, 'three files landed', 60_000, 10).then(() =>
        child.kill('SIGINT'),
      );
    });
    expect(stopped.code).toBe(130);
    expect(stopped.err).toContain('Canceled. Run the same command again to go on where it stopped.');
    // Only whole, verified files are visible: no temporary or cut-off file.
    const visible = await readdir(out, { recursive: true });
    expect(visible.length).toBeLessThan(20);
    // The files it did not get to are one count, not a failure line each.
    expect(stopped.out).toMatch(
      new RegExp(`^canceled: ${visible.length} of 20 done .*, ${20 - visible.length} not done\\.$`, 'm'),
    );
    expect(stopped.err).not.toMatch(/^failed: /m);
    for (const name of visible) expect(await readFile(join(out, name))).toEqual(await readFile(join(src, name)));

    const again = await skyferry(['sync', 'far:cancel-src', out, '--quiet']);
    expect(again.code).toBe(0);
    const marks = await rcloneCheck(src, out);
    expect([...marks.values()]).toEqual(Array(20).fill('='));
  });

  it('a side that cannot be opened ends the run at once (exit 1), closing the side that was opened', async () => {
    const started = Date.now();
    const r = await skyferry(['copy', 'nas:', join(dir, 'no', 'such', 'folder')], (child) => {
      // An SFTP connection left open would keep the process alive.
      setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
    });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^skyferry: not_found: /);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('bisync between a folder here and SFTP carries changes both ways', async () => {
    const here = join(dir, 'two-way');
    await mkdir(here);
    await writeFile(join(here, 'mine.txt'), 'written here');
    await mkdir(join(ssh.dir, 'shared'));
    await writeFile(join(ssh.dir, 'shared', 'theirs.txt'), 'written there');

    const first = await skyferry(['bisync', here, 'nas:shared']);
    expect(first.code).toBe(0);
    expect(await readFile(join(ssh.dir, 'shared', 'mine.txt'), 'utf8')).toBe('written here');
    expect(await readFile(join(here, 'theirs.txt'), 'utf8')).toBe('written there');

    await writeFile(join(ssh.dir, 'shared', 'theirs.txt'), 'edited there');
    await rm(join(here, 'mine.txt'));
    const second = await skyferry(['bisync', here, 'nas:shared', '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out)).toMatchObject({ outcome: 'success', summary: { updated: 1, deleted: 1 } });
    expect(await readFile(join(here, 'theirs.txt'), 'utf8')).toBe('edited there');
    expect((await readdir(join(ssh.dir, 'shared'))).filter((n) => !n.startsWith('.'))).toEqual(['theirs.txt']);
  });

  it('two bisync processes of one pair at once: one runs, the other stops with a clear message; the state stays whole', async () => {
    const here = join(dir, 'two-at-once');
    await makeFiles(here, 30, 20_000);
    await mkdir(join(ssh.dir, 'at-once'));
    // Behind 40 ms of round trip: each run lasts long enough for the two to meet.
    const [a, b] = await Promise.all([
      skyferry(['bisync', here, 'farnas:at-once']),
      skyferry(['bisync', 'farnas:at-once', here]),
    ]);
    const codes = [a.code, b.code].sort();
    expect(codes, `${a.err}\n${b.err}`).toEqual([0, 1]);
    const lost = a.code === 1 ? a : b;
    expect(lost.err).toMatch(
      /^skyferry: another sync of this pair is running \(skyferry bisync, process \d+ on .+\); run again once it has finished\n$/,
    );
    // The winner's state is whole: the next run finds nothing to do.
    const again = await skyferry(['bisync', here, 'farnas:at-once', '--json']);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ outcome: 'success', summary: { added: 0, updated: 0, deleted: 0 } });
    expect((await readdir(join(ssh.dir, 'at-once'))).filter((n) => !n.startsWith('.')).length).toBe(30);
  }, 120_000);

  it('mirror to WebDAV (no modification times kept there) sends a same-size edit, and nothing unchanged again', async () => {
    const here = join(dir, 'mirror-dav');
    await mkdir(here);
    await writeFile(join(here, 'a.txt'), 'v1-a');
    await writeFile(join(here, 'b.txt'), 'same');
    const first = await skyferry(['mirror', here, 'dav:mirrored', '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ outcome: 'success', summary: { added: 2 } });
    await writeFile(join(here, 'a.txt'), 'v2-b');
    const second = await skyferry(['mirror', here, 'dav:mirrored', '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out)).toMatchObject({ outcome: 'success', summary: { updated: 1, skipped: 1 } });
    expect(await readFile(join(dav.dir, 'mirrored', 'a.txt'), 'utf8')).toBe('v2-b');
    const third = await skyferry(['mirror', here, 'dav:mirrored', '--json']);
    expect(JSON.parse(third.out)).toMatchObject({ outcome: 'success', summary: { added: 0, updated: 0, skipped: 2 } });
  });

  it('move to SFTP (no hash to compare): deletes what it copied; a same-size file already there needs --download', async () => {
    const src = join(dir, 'outbox');
    await makeFiles(src, 3, 20_000);
    await mkdir(join(ssh.dir, 'inbox', 'outbox'), { recursive: true });
    // Already there at the same size and time: the copy skips it, and nothing here can compare it without reading it.
    await writeFile(join(ssh.dir, 'inbox', 'outbox', 'f00.bin'), await readFile(join(src, 'f00.bin')));
    await utimes(
      join(ssh.dir, 'inbox', 'outbox', 'f00.bin'),
      (await stat(join(src, 'f00.bin'))).mtime,
      (await stat(join(src, 'f00.bin'))).mtime,
    );

    const first = await skyferry(['move', src, 'nas:inbox']);
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/2 added.*\nMoved: 2 source files deleted, .*; 1 kept\./s);
    expect(first.err).toContain(
      'f00.bin: a file of the same size is on the target, but could not be compared (--download reads it)',
    );
    expect(await readdir(src)).toEqual(['f00.bin']);
    for (const name of ['f01.bin', 'f02.bin'])
      expect((await stat(join(ssh.dir, 'inbox', 'outbox', name))).size).toBe(20_000);

    // --download reads the target's copy, finds it the same, and the move completes.
    const second = await skyferry(['move', src, 'nas:inbox', '--download']);
    expect(second.err).toBe('');
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/Moved: 1 source file deleted/);
    expect(await readdir(src)).toEqual([]);
  });

  it('a move to SFTP killed midway, started again, trusts by size the files its first attempt wrote and checked', async () => {
    const src = join(dir, 'moving-out');
    // Above the engine's small-file size, so `--transfers 1` copies one at a time.
    await makeFiles(src, 8, 1_200_000);
    const originals = new Map<string, Buffer>();
    for (const name of await readdir(src)) originals.set(name, await readFile(join(src, name)));
    const landed = join(ssh.dir, 'moved-in', 'moving-out');
    const files = async () => (await readdir(landed).catch(() => [] as string[])).filter((n) => n.endsWith('.bin'));
    const killed = await skyferry(['move', src, 'farnas:moved-in', '--transfers', '1'], (child) => {
      void waitFor(async () => (await files()).length >= 2, 'two files moved', 60_000, 10).then(() =>
        child.kill('SIGKILL'),
      );
    });
    expect(killed.signal).toBe('SIGKILL');
    expect((await files()).length).toBeLessThan(8);
    // Nothing was deleted: the copy never ended.
    expect((await readdir(src)).length).toBe(8);
    // What the first attempt recorded as written and checked (its resume file); a file that
    // landed in the instant before the kill may not be recorded yet.
    const runs = join(dir, 'state', 'runs');
    const recorded = new Set<string>();
    for (const f of await readdir(runs))
      for (const line of (await readFile(join(runs, f), 'utf8')).split('\n').filter(Boolean)) {
        const path = (JSON.parse(line) as { i: { read?: { path: string } } }).i.read?.path;
        if (path?.startsWith('/moving-out/')) recorded.add(path.slice('/moving-out/'.length));
      }
    expect(recorded.size).toBeGreaterThanOrEqual(1);
    const unrecorded = (await files()).filter((n) => !recorded.has(n)).sort();

    const again = await skyferry(['move', src, 'farnas:moved-in']);
    // The recorded files are deleted from the source; only one that landed unrecorded is kept.
    expect(again.err.split('\n').filter(Boolean)).toEqual(
      unrecorded.map(
        (n) =>
          `kept: /moving-out/${n}: a file of the same size is on the target, but could not be compared (--download reads it)`,
      ),
    );
    expect(again.code).toBe(unrecorded.length ? 1 : 0);
    expect((await readdir(src)).sort()).toEqual(unrecorded);
    if (unrecorded.length) expect((await skyferry(['move', src, 'farnas:moved-in', '--download'])).code).toBe(0);
    expect(await readdir(src)).toEqual([]);
    expect((await files()).sort()).toEqual([...originals.keys()].sort());
    for (const [name, data] of originals) expect(await readFile(join(landed, name))).toEqual(data);
  });

  it('a move to SFTP cancelled once its files are copied (while it compares and deletes) exits 130, and started again finishes', async () => {
    const src = join(dir, 'moving-late');
    await makeFiles(src, 8, 1_200_000);
    const landed = join(ssh.dir, 'moved-late', 'moving-late');
    const files = async () => (await readdir(landed).catch(() => [] as string[])).filter((n) => n.endsWith('.bin'));
    const stopped = await skyferry(['move', src, 'farnas:moved-late'], (child) => {
      void waitFor(async () => (await files()).length >= 8, 'every file copied', 60_000, 5).then(() =>
        child.kill('SIGINT'),
      );
    });
    expect(stopped.err).not.toMatch(/Unhandled|\n\s+at /);
    expect([0, 130]).toContain(stopped.code);
    const again = await skyferry(['move', src, 'farnas:moved-late']);
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
    expect(await readdir(src)).toEqual([]);
    expect((await files()).length).toBe(8);
  });

  it('move from S3 to a folder here checks each object by its MD5, deletes them, and the emptied folders with --delete-empty-src-dirs', async () => {
    const up = join(dir, 'upload', 'tree');
    await makeFiles(join(up, 'sub'), 2, 30_000);
    await makeFiles(up, 2, 60_000);
    expect((await skyferry(['copy', up, 'store:moving'])).code).toBe(0);
    expect(await objectsUnder('moving/tree')).toHaveLength(4);

    const down = join(dir, 'download');
    await mkdir(down);
    const r = await skyferry(['move', 'store:moving/tree', down, '--delete-empty-src-dirs']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // The copy made no folder markers (its folders hold files): the folders went with their last objects.
    expect(r.out).toMatch(/Moved: 4 source files deleted, .*\. 0 emptied folders removed\.\n$/);
    for (const rel of ['f00.bin', 'f01.bin', 'sub/f00.bin', 'sub/f01.bin']) {
      expect(await readFile(join(down, 'tree', rel))).toEqual(await readFile(join(up, rel)));
    }
    expect(await objectsUnder('moving/tree')).toEqual([]);
    const tree = await skyferry(['ls', 'store:moving/tree']);
    expect(tree.code).toBe(1);
    expect(tree.err).toMatch(/not_found/);
  });

  it('move between a folder here and the same folder through SFTP deletes nothing (the two are one place)', async () => {
    const alias = join(ssh.dir, 'alias');
    await makeFiles(alias, 2, 5_000);
    await mkdir(join(alias, 'empty'));
    const r = await skyferry(['move', alias, 'nas:', '--delete-empty-src-dirs']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/Moved: 0 source files deleted, .*; 1 kept\. 0 emptied folders removed\./);
    expect(r.err).toContain(
      '/alias: the target is this same place (a file written there appears here); nothing of it deleted',
    );
    expect((await readdir(alias)).sort()).toEqual(['empty', 'f00.bin', 'f01.bin']);
  });
});
