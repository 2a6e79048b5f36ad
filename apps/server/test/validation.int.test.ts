import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CloudsMeData, type ServerTask } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal } from './support/tasks.ts';

/**
 * Values the API used to take although they contradict themselves or cannot be shown: used space
 * above the total, an order naming a cloud twice, control characters in the names people read
 * (tasks, clouds), and a repeat type the schedule does not have.
 */
describe('contradictory and unprintable input is refused with 400', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let a: Cloud;
  let b: Cloud;
  const call = caller(() => t);

  beforeAll(async () => {
    t = await startTestApp();
    u = await t.signUp();
    a = await connectLocal(call, u.headers, t.makeLocalFolder('a'), 'A');
    b = await connectLocal(call, u.headers, t.makeLocalFolder('b'), 'B');
  });
  afterAll(async () => {
    await t?.close();
  });

  const cloudOf = async (id: string) =>
    (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: u.headers })).data.clouds.find((c) => c.id === id);

  it('refuses used_space above space, given together or against the stored total; equal and unknown totals pass', async () => {
    const both = await call('PUT', `/api/clouds/${a.id}`, {
      headers: u.headers,
      body: { space: 100, used_space: 101 },
    });
    expect([both.status, both.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(both.msg).toContain('used_space');

    expect(
      (await call('PUT', `/api/clouds/${a.id}`, { headers: u.headers, body: { space: 100, used_space: 100 } })).code,
    ).toBe(0);
    const over = await call('PUT', `/api/clouds/${a.id}`, { headers: u.headers, body: { used_space: 150 } });
    expect([over.status, over.code]).toEqual([400, Code.BAD_REQUEST]);
    const shrunk = await call('PUT', `/api/clouds/${a.id}`, { headers: u.headers, body: { space: 50 } });
    expect([shrunk.status, shrunk.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(await cloudOf(a.id)).toMatchObject({ space: 100, used_space: 100 });

    // A total of 0 means "not known": any used figure goes with it.
    expect(
      (await call('PUT', `/api/clouds/${b.id}`, { headers: u.headers, body: { space: 0, used_space: 7 } })).code,
    ).toBe(0);
  });

  it('refuses an order that names a cloud twice, and keeps the order it had', async () => {
    const before = (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: u.headers })).data.clouds.map(
      (c) => c.id,
    );
    const twice = await call('PUT', '/api/clouds/sort', {
      headers: u.headers,
      body: { sort_val: JSON.stringify([b.id, a.id, b.id]) },
    });
    expect([twice.status, twice.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(twice.msg).toContain('sort_val');
    const after = (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: u.headers })).data.clouds.map(
      (c) => c.id,
    );
    expect(after).toEqual(before);
    expect(
      (await call('PUT', '/api/clouds/sort', { headers: u.headers, body: { sort_val: JSON.stringify([b.id, a.id]) } }))
        .code,
    ).toBe(0);
  });

  it.each([
    ['NUL', 'Holiday\u0000photos'],
    ['a line break', 'Holiday\nphotos'],
    ['an escape', 'Holiday\u001b[31m'],
    ['DEL', 'Holiday\u007f'],
    ['a C1 control', 'Holiday\u0085photos'],
  ])('refuses %s in a cloud alias, on connect and on rename', async (_what, alias) => {
    const renamed = await call('PUT', `/api/clouds/${a.id}`, { headers: u.headers, body: { alias } });
    expect([renamed.status, renamed.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(renamed.msg).toContain('alias');
    const connected = await call('POST', '/api/clouds', {
      headers: u.headers,
      body: { cloud_name: 'local', alias, credentials: { path: t.makeLocalFolder('c') } },
    });
    expect([connected.status, connected.code]).toEqual([400, Code.BAD_REQUEST]);
    expect((await cloudOf(a.id))?.cloud_alias_name).toBe('A');
  });

  const task = (extra: Record<string, unknown>) => ({
    task_type: 0,
    from_cloud: { cloud_id: a.id, paths: ['/'] },
    to_cloud: { cloud_id: b.id, path: '/' },
    ...extra,
  });

  it.each([
    ['NUL', 'Backup\u0000'],
    ['a line break', 'Back\nup'],
    ['a C1 control', 'Back\u009bup'],
  ])('refuses %s in a task name; a plain name with accents and emoji is taken', async (_what, task_name) => {
    const bad = await call('POST', '/api/tasks', { headers: u.headers, body: task({ task_name, dry_run: true }) });
    expect([bad.status, bad.code]).toEqual([400, Code.BAD_REQUEST]);
    expect(bad.msg).toContain('task_name');
    const good = await call<{ task: ServerTask | null }>('POST', '/api/tasks', {
      headers: u.headers,
      body: task({ task_name: 'Sauvegarde été 📷', schedule: { start_date: '2099-01-01 00:00:00' } }),
    });
    expect(good.code).toBe(0);
    expect(good.data.task?.task_name).toBe('Sauvegarde été 📷');
  });

  it('refuses a repeat_type outside 0 (daily), 1 (weekly) and 2 (monthly)', async () => {
    for (const repeat_type of [3, 7, -1]) {
      const res = await call('POST', '/api/tasks', {
        headers: u.headers,
        body: task({ schedule: { start_date: '2099-01-01 08:00:00', repeat_type, hour: 8, minute: 0, second: 0 } }),
      });
      expect([res.status, res.code], `repeat_type ${repeat_type}`).toEqual([400, Code.BAD_REQUEST]);
      expect(res.msg).toContain('repeat_type');
    }
    const monthly = await call<{ task: ServerTask | null }>('POST', '/api/tasks', {
      headers: u.headers,
      body: task({
        schedule: { start_date: '2099-01-01 08:00:00', repeat_type: 2, day: 1, hour: 8, minute: 0, second: 0 },
      }),
    });
    expect(monthly.code).toBe(0);
    expect(monthly.data.task?.schedule?.repeat_type).toBe(2);
  });
});
