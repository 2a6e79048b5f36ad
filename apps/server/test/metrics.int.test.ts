import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateTaskData } from '@skyferry/contract';
import { startTestApp, type TestApp } from './support/app.ts';
import { CloudFaults, caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

const TOKEN = 'metrics-token-' + randomBytes(12).toString('hex');

/** The value of one sample of the Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('metrics and request ids', () => {
  let t: TestApp;
  const call = caller(() => t);
  const faults = new CloudFaults();

  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_WORKERS: '1', SKYFERRY_METRICS_TOKEN: TOKEN } });
    faults.install(t.ctx.clouds);
  });
  afterAll(async () => t?.close());

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('serves /metrics only with the operator token: 401 envelope without it or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-of-some-length' }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      const body = JSON.parse(res.body) as { code: number; msg: string; request_id: string };
      expect(body.code).toBe(140013);
      expect(res.body).not.toContain('skyferry_');
      expect(body.request_id).toBe(res.headers['x-request-id']);
    }
    // Not part of the API's documented surface.
    const doc = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    if (doc.statusCode === 200)
      expect(Object.keys((JSON.parse(doc.body) as { paths: object }).paths)).not.toContain('/metrics');
  });

  it('counts HTTP latency by route pattern, and the event-loop lag and process figures', async () => {
    await call('GET', '/healthz');
    await call('GET', '/api/tasks/00000000-0000-0000-0000-000000000000');
    const text = await scrape();
    expect(
      sample(text, 'skyferry_http_request_duration_seconds_count', { route: '/healthz', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    // The pattern, not the id: one series however many tasks there are.
    expect(text).toContain('route="/api/tasks/:id"');
    expect(text).not.toContain('00000000-0000-0000-0000-000000000000');
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts task runs, files, bytes and errors by backend and reason, and the queue by state', async () => {
    const user = await t.signUp();
    const src = t.makeLocalFolder('m-src');
    const dst = t.makeLocalFolder('m-dst');
    writeTree(src, { 'A/one.bin': randomBytes(1000), 'A/two.bin': randomBytes(2000), 'A/bad.bin': randomBytes(10) });
    faults.failing.add('/A/bad.bin');
    const from = await connectLocal(call, user.headers, src);
    const to = await connectLocal(call, user.headers, dst);
    const before = await scrape();
    const created = await call<CreateTaskData>('POST', '/api/tasks', {
      headers: user.headers,
      body: {
        task_type: 0,
        from_cloud: { cloud_id: from.id, paths: ['/A'] },
        to_cloud: { cloud_id: to.id, path: '/' },
      },
    });
    expect(created.code).toBe(0);
    const { task } = await waitForState(call, user.headers, created.data.task?.id ?? '');
    expect(task.state).toBe(5); // partially successful: one file unreadable
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('skyferry_task_runs_total', { outcome: 'partial' })).toBe(1);
    expect(delta('skyferry_task_runs_started_total')).toBe(1);
    expect(delta('skyferry_task_run_duration_seconds_count', { outcome: 'partial' })).toBe(1);
    expect(delta('skyferry_task_queue_wait_seconds_count')).toBe(1);
    expect(delta('skyferry_transfer_files_total', { outcome: 'done' })).toBe(2);
    expect(delta('skyferry_transfer_files_total', { outcome: 'failed' })).toBeGreaterThanOrEqual(1);
    expect(delta('skyferry_transfer_bytes_total')).toBe(3000);
    expect(delta('skyferry_transfer_errors_total', { backend: 'local', reason: 'permission' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(after, 'skyferry_task_runs_in_progress')).toBe(0);
    expect(sample(after, 'skyferry_tasks', { state: 'partial' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'skyferry_tasks', { state: 'waiting' }) ?? 0).toBe(0);
  });

  it('gives every answer an id (X-Request-Id, a proxy’s own when well-formed) and puts it in error answers and every log line of the request', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/tasks/not-a-task',
      headers: { authorization: 'Bearer nope' },
    });
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const body = JSON.parse(res.body) as { code: number; request_id?: string };
    expect(body.code).not.toBe(0);
    expect(body.request_id).toBe(id);
    const given = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'proxy-abc-12345' },
    });
    expect(given.headers['x-request-id']).toBe('proxy-abc-12345');
    const bad = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'x"\n<script>' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    // A line a service logs while serving the request (below the routes) carries the id too.
    const user = await t.signUp();
    const marker = `req-${randomBytes(6).toString('hex')}`;
    const original = t.ctx.clouds.open.bind(t.ctx.clouds);
    t.ctx.clouds.open = async (...args) => {
      t.ctx.log.info({ marker }, 'opening a cloud');
      return original(...args);
    };
    try {
      const folder = t.makeLocalFolder('m-logs');
      const cloud = await connectLocal(call, user.headers, folder);
      const list = await t.app.inject({
        method: 'POST',
        url: '/api/cloud-manager/list',
        headers: { ...user.headers, 'x-request-id': `${marker}-request` },
        payload: { cloud_id: cloud.id, path: '/', refresh: true },
      });
      expect(list.statusCode).toBe(200);
      expect(list.headers['x-request-id']).toBe(`${marker}-request`);
    } finally {
      t.ctx.clouds.open = original;
    }
    const lines = t
      .logs()
      .split('\n')
      .filter((l) => l.includes(marker))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const serviceLines = lines.filter((l) => l.msg === 'opening a cloud');
    expect(serviceLines.length).toBeGreaterThan(0);
    for (const l of serviceLines) expect(l.reqId).toBe(`${marker}-request`);
    // Every line of the request names it, each once.
    const all = t
      .logs()
      .split('\n')
      .filter((l) => l.includes(`"${marker}-request"`));
    for (const l of all) expect(l.match(/"reqId":/g)).toHaveLength(1);
  });
});
