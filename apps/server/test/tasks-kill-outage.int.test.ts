import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationData, Cloud, CreateTaskData, PollProgressData, TaskDetail } from '@skyferry/contract';
import { startLatencyProxy, startRcloneServe, type LatencyProxy, type RcloneServer } from '@skyferry/testing';
import { Proc, fetchEnvelope } from './support/process.ts';

// Issue 35: a 2,000-file migration to a WebDAV server (rclone serve webdav, which writes an upload
// straight into its temporary file, so a cut-off upload stays as debris) on a server process (API
// and worker in one) that is killed with SIGKILL mid-run, then, on the server started in its place
// that takes the run over, an outage of the target (the proxy in front of it goes away for two seconds and comes back). Afterwards: no
// `.skyferry-tmp-*` file anywhere on the target, `rclone check` finds no difference, every file is
// counted once (2,000 added; none skipped, failed or left out), and the progress the API showed
// never went back, neither across the kill nor through the outage.

const SERVER = join(import.meta.dirname, '../src/main.ts');
const FILES = 2000;
const LARGE = 20;
// The first server copies quickly; the one that takes the run over meets a slower target, so that it
// is still writing (it skips what was recorded and plans the rest first) when the target goes away.
const RTT_MS = 10;
const RESUMED_RTT_MS = 60;

interface Seen {
  at: number;
  status: number;
  finished: number;
  total: number;
  percentage: number;
}

describe('a 2,000-file run through a server killed with SIGKILL and an outage of its WebDAV target', () => {
  const root = mkdtempSync(join(tmpdir(), 'skyferry-kill-'));
  const localRoot = join(root, 'local');
  const src = join(localRoot, 'source');
  const davDir = join(root, 'dav');
  const procs: Proc[] = [];
  let dav: RcloneServer;
  let proxy: LatencyProxy;
  let proxyPort = 0;
  let url = '';
  let env: Record<string, string>;

  beforeAll(async () => {
    for (let i = 0; i < FILES; i++) {
      const dir = join(src, 'Data', `d${i % 20}`);
      mkdirSync(dir, { recursive: true });
      const size = i < LARGE ? 512 * 1024 : 2048 + ((i * 7919) % 14_000);
      writeFileSync(join(dir, `f${i}.bin`), randomBytes(size));
    }
    mkdirSync(davDir, { recursive: true });
    dav = await startRcloneServe('webdav', { dir: davDir });
    proxy = await startLatencyProxy({ target: { host: '127.0.0.1', port: dav.port }, rttMs: RTT_MS });
    proxyPort = proxy.port;
    env = {
      DATABASE_URL: join(root, 'data', 'skyferry.db'),
      SKYFERRY_DATA_DIR: join(root, 'data'),
      SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
      SKYFERRY_LOCAL_ROOTS: localRoot,
      SKYFERRY_WEB_DIST: join(root, 'no-web'),
      SKYFERRY_TASK_LEASE_MS: '3000',
      // The WebDAV server is on this machine's loopback.
      SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      SKYFERRY_WORKERS: '1',
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await proxy?.stop();
    await dav?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('leaves no temporary file, no difference, and counts every file once', async () => {
    const doomed = new Proc(SERVER, env);
    procs.push(doomed);
    url = String((await doomed.ready).url);
    const call = <T>(method: string, path: string, body?: unknown, token?: string) =>
      fetchEnvelope<T>(url, method, path, body, token);
    const signup = await call<AuthorizationData>('POST', '/api/account/signup', {
      email: `kill-${randomUUID().slice(0, 6)}@example.com`,
      password: 'a long enough password',
    });
    const token = signup.data.access_token;
    const local = await call<Cloud>('POST', '/api/clouds', { cloud_name: 'local', credentials: { path: src } }, token);
    const target = await call<Cloud>(
      'POST',
      '/api/clouds',
      {
        cloud_name: 'webdav',
        credentials: { url: `http://127.0.0.1:${proxyPort}/`, username: dav.username, password: dav.password },
      },
      token,
    );
    expect([local.code, target.code], `${local.msg} ${target.msg}`).toEqual([0, 0]);

    const created = await call<CreateTaskData>(
      'POST',
      '/api/tasks',
      {
        task_type: 0,
        from_cloud: { cloud_id: local.data.id, paths: ['/Data'] },
        to_cloud: { cloud_id: target.data.id, path: '/Backup' },
      },
      token,
    );
    expect(created.code, created.msg).toBe(0);
    const id = created.data.task?.id ?? '';

    const seen: Seen[] = [];
    const poll = async (): Promise<Seen> => {
      const p = await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, undefined, token);
      const s = {
        at: Date.now(),
        status: p.data.status,
        finished: p.data.finished_counts,
        total: p.data.total_counts,
        percentage: p.data.progress.percentage,
      };
      seen.push(s);
      return s;
    };
    const until = async (what: string, ok: (s: Seen) => boolean, timeoutMs = 90_000): Promise<Seen> => {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const s = await poll();
        if (ok(s)) return s;
        if (Date.now() > end)
          throw new Error(
            `waited for ${what}; last seen ${JSON.stringify(s)} ${JSON.stringify(seen.map((x) => [x.status, x.finished, x.total]).filter((x, i, a) => i === 0 || JSON.stringify(a[i - 1]) !== JSON.stringify(x)))}`,
          );
        await sleep(50);
      }
    };

    // 1. The server is killed mid-run, with uploads under way.
    const beforeKill = await until('a quarter done', (s) => s.finished >= FILES / 4);
    doomed.child.kill('SIGKILL');
    expect(beforeKill.finished).toBeLessThan(FILES);
    await proxy.stop();
    proxy = await startLatencyProxy({
      target: { host: '127.0.0.1', port: dav.port },
      rttMs: RESUMED_RTT_MS,
      port: proxyPort,
    });
    // A server started in its place takes the run over once the killed one's lease runs out.
    const survivor = new Proc(SERVER, env);
    procs.push(survivor);
    url = String((await survivor.ready).url);
    await until('the run to go on', (s) => s.status === 2 && s.finished > beforeKill.finished + 50);

    // 2. The target goes away for two seconds, uploads under way are cut off, and comes back.
    await proxy.stop();
    await sleep(2000);
    proxy = await startLatencyProxy({
      target: { host: '127.0.0.1', port: dav.port },
      rttMs: RESUMED_RTT_MS,
      port: proxyPort,
    });

    const end = await until('the run to end', (s) => ![1, 2, 7, 8, 9].includes(s.status), 120_000);
    const detail = (await call<TaskDetail>('GET', `/api/tasks/${id}`, undefined, token)).data;
    const listed = detail.result_list.map((f) => `${f.sourceFile.name}: ${f.reason} ${f.message}`);
    expect(listed, `the result lists ${JSON.stringify(listed)}`).toEqual([]);
    expect(end.status).toBe(0);
    // The run was resumed: the survivor's log says so.
    expect(survivor.lines.some((l) => l.msg === 'task run started' && l.task === id)).toBe(true);

    // Every file once, as added: none skipped (those the killed worker copied), failed or left out.
    expect(detail.result).toMatchObject({
      outcome: 'success',
      success_count: FILES,
      total_count: FILES,
      added: FILES,
      updated: 0,
      deleted: 0,
      skipped: 0,
      failed: 0,
      conflicts: 0,
      not_done: 0,
    });
    expect([detail.total_counts, detail.finished_counts]).toEqual([FILES, FILES]);

    // What the API showed never went back.
    const running = seen.filter((s) => s.status === 1 || s.status === 2);
    expect(running.length).toBeGreaterThan(10);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1] as Seen, seen[i] as Seen];
      expect(b.finished, `finished_counts at ${i}: ${JSON.stringify([a, b])}`).toBeGreaterThanOrEqual(a.finished);
      expect(b.percentage, `percentage at ${i}: ${JSON.stringify([a, b])}`).toBeGreaterThanOrEqual(a.percentage);
    }

    // No debris of the cut-off uploads, and the target is the source's copy to the byte.
    const debris = readdirSync(davDir, { recursive: true, encoding: 'utf8' }).filter((p) =>
      (p.split('/').pop() ?? '').startsWith('.skyferry-tmp-'),
    );
    expect(debris, `left on the target: ${JSON.stringify(debris)}`).toEqual([]);
    const check = spawnSync(
      'rclone',
      ['check', join(src, 'Data'), join(davDir, 'Backup', 'Data'), '--download', '--config', '/dev/null'],
      { encoding: 'utf8' },
    );
    expect(check.status, check.stderr).toBe(0);
    expect(check.stderr).toMatch(/: 0 differences found/);
    expect(check.stderr).toMatch(new RegExp(`: ${FILES} matching files`));
  }, 300_000);
});
