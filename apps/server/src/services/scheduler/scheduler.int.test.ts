import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import type { Schedule } from '@skyferry/contract';
import { TasksRepository } from '../../repositories/tasks.ts';
import { nextRunAfter, Scheduler, type Clock, type ScheduledTask } from './scheduler.ts';

class FakeClock implements Clock {
  t: number;
  constructor(iso: string) {
    this.t = Date.parse(iso);
  }
  now() {
    return this.t;
  }
  set(iso: string) {
    this.t = Date.parse(iso);
  }
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

for (const dialect of ['sqlite', 'postgres'] as const)
  describe(`Scheduler [${dialect}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshDb>> | undefined;
    const extra: Db[] = [];
    beforeAll(async () => {
      fresh = await freshDb(dialect);
    });
    afterAll(async () => {
      await Promise.all(extra.map((db) => db.close()));
      await fresh?.cleanup();
    });
    const getDb = (): Db => {
      if (!fresh) throw new Error('database not ready');
      return fresh.db;
    };

    async function addTask(schedule: Schedule, timeZone: string, clock: Clock, isSchedule = 2): Promise<string> {
      const id = randomUUID();
      const now = clock.now();
      await new TasksRepository(getDb().kysely).insert({
        id,
        user_id: 'user-1',
        task_name: 'scheduled',
        task_type: 0,
        from_cloud: JSON.stringify({ cloud_id: 'a', paths: ['/'] }),
        to_cloud: JSON.stringify({ cloud_id: 'b', path: '/x' }),
        sync_mode: null,
        same_name_policy: 'skip',
        filter: null,
        conflict_resolution: 'keep_both',
        schedule: JSON.stringify(schedule),
        time_zone: timeZone,
        is_schedule: isSchedule,
        next_run_time: nextRunAfter(schedule, timeZone, now),
        state: 7,
        created_at: now,
        updated_at: now,
      });
      return id;
    }

    /** A scheduler that records the slots it fired, per task. */
    function scheduler(clock: Clock, db: Db = getDb()) {
      const fired: Array<{ id: string; slot: string }> = [];
      const s = new Scheduler({
        store: new TasksRepository(db.kysely),
        clock,
        fire: async (task: ScheduledTask, slot: number) => {
          fired.push({ id: task.id, slot: iso(slot) });
        },
      });
      return { s, fired, slots: (id: string) => fired.filter((f) => f.id === id).map((f) => f.slot) };
    }

    /** Moves the clock from `from` to `to` in steps, ticking at each. */
    async function run(clock: FakeClock, s: Scheduler, from: string, to: string, stepMs: number) {
      for (clock.set(from); clock.t <= Date.parse(to); clock.t += stepMs) await s.tick();
    }

    it('runs a daily schedule at the wall time, each day, once', async () => {
      const clock = new FakeClock('2026-01-10T06:00:00Z');
      const sch = { start_date: '2026-01-10 08:30:00', repeat_type: 0, hour: 8, minute: 30, second: 0 };
      const id = await addTask(sch, 'Europe/Berlin', clock);
      const { s, slots } = scheduler(clock);
      clock.set('2026-01-10T07:29:59Z');
      await s.tick();
      expect(slots(id)).toEqual([]);
      clock.set('2026-01-10T07:30:00Z');
      await s.tick();
      await s.tick();
      expect(slots(id)).toEqual(['2026-01-10T07:30:00Z']);
      await run(clock, s, '2026-01-10T07:30:00Z', '2026-01-13T07:00:00Z', 15 * 60_000);
      expect(slots(id)).toEqual(['2026-01-10T07:30:00Z', '2026-01-11T07:30:00Z', '2026-01-12T07:30:00Z']);
      const row = await new TasksRepository(getDb().kysely).getById(id);
      expect(iso(Number(row?.next_run_time))).toBe('2026-01-13T07:30:00Z');
    });

    it('runs a weekly schedule on the named day only', async () => {
      const clock = new FakeClock('2026-01-01T00:00:00Z');
      // Created on a Thursday, repeating on Mondays at 09:00 New York time.
      const sch: Schedule = {
        start_date: '2026-01-01 09:00:00',
        repeat_type: 1,
        day_of_week: 'mon',
        hour: 9,
        minute: 0,
        second: 0,
      };
      const id = await addTask(sch, 'America/New_York', clock);
      const { s, slots } = scheduler(clock);
      await run(clock, s, '2026-01-01T00:00:00Z', '2026-01-27T00:00:00Z', 3 * 3600_000);
      expect(slots(id)).toEqual([
        '2026-01-05T14:00:00Z',
        '2026-01-12T14:00:00Z',
        '2026-01-19T14:00:00Z',
        '2026-01-26T14:00:00Z',
      ]);
    });

    it('runs a monthly schedule on the 31st, on the last day of shorter months', async () => {
      const clock = new FakeClock('2026-01-30T00:00:00Z');
      const sch: Schedule = {
        start_date: '2026-01-31 12:00:00',
        repeat_type: 2,
        day: 31,
        hour: 12,
        minute: 0,
        second: 0,
      };
      const id = await addTask(sch, 'Asia/Tokyo', clock);
      const { s, slots } = scheduler(clock);
      await run(clock, s, '2026-01-30T00:00:00Z', '2026-06-01T00:00:00Z', 6 * 3600_000);
      expect(slots(id)).toEqual([
        '2026-01-31T03:00:00Z',
        '2026-02-28T03:00:00Z',
        '2026-03-31T03:00:00Z',
        '2026-04-30T03:00:00Z',
        '2026-05-31T03:00:00Z',
      ]);
    });

    it('keeps the wall time across DST changes: skipped times run after the jump, repeated times run once', async () => {
      const clock = new FakeClock('2026-03-27T00:00:00Z');
      const nine = await addTask(
        { start_date: '2026-03-27 09:00:00', repeat_type: 0, hour: 9, minute: 0, second: 0 },
        'Europe/Berlin',
        clock,
      );
      const half2 = await addTask(
        { start_date: '2026-03-27 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 },
        'Europe/Berlin',
        clock,
      );
      const { s, slots } = scheduler(clock);
      // Spring forward on 29 March: 02:00 CET becomes 03:00 CEST.
      await run(clock, s, '2026-03-27T00:00:00Z', '2026-03-31T00:00:00Z', 10 * 60_000);
      expect(slots(nine)).toEqual([
        '2026-03-27T08:00:00Z',
        '2026-03-28T08:00:00Z',
        '2026-03-29T07:00:00Z',
        '2026-03-30T07:00:00Z',
      ]);
      expect(slots(half2)).toEqual([
        '2026-03-27T01:30:00Z',
        '2026-03-28T01:30:00Z',
        '2026-03-29T01:30:00Z', // 02:30 does not exist that night: 03:30 CEST
        '2026-03-30T00:30:00Z',
      ]);
      // Fall back on 25 October: 02:30 happens twice, the schedule runs at the first.
      const autumn = new FakeClock('2026-10-23T12:00:00Z');
      const again = await addTask(
        { start_date: '2026-10-23 02:30:00', repeat_type: 0, hour: 2, minute: 30, second: 0 },
        'Europe/Berlin',
        autumn,
      );
      const fall = scheduler(autumn);
      await run(autumn, fall.s, '2026-10-23T12:00:00Z', '2026-10-27T00:00:00Z', 10 * 60_000);
      expect(fall.slots(again)).toEqual(['2026-10-24T00:30:00Z', '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
    });

    it('after downtime runs a missed schedule once, then at its next slot', async () => {
      const clock = new FakeClock('2026-02-01T00:00:00Z');
      const daily = await addTask(
        { start_date: '2026-02-01 06:00:00', repeat_type: 0, hour: 6, minute: 0, second: 0 },
        'UTC',
        clock,
      );
      const once = await addTask({ start_date: '2026-02-02 10:00:00' }, 'UTC', clock);
      const { s, slots } = scheduler(clock);
      await s.tick();
      // The server is down from 1 to 6 February.
      clock.set('2026-02-06T12:00:00Z');
      await s.tick();
      await s.tick();
      expect(slots(daily)).toEqual(['2026-02-01T06:00:00Z']);
      expect(slots(once)).toEqual(['2026-02-02T10:00:00Z']);
      const repo = new TasksRepository(getDb().kysely);
      expect(iso(Number((await repo.getById(daily))?.next_run_time))).toBe('2026-02-07T06:00:00Z');
      expect((await repo.getById(once))?.next_run_time).toBeNull();
      await run(clock, s, '2026-02-06T12:00:00Z', '2026-02-08T00:00:00Z', 30 * 60_000);
      expect(slots(daily)).toEqual(['2026-02-01T06:00:00Z', '2026-02-07T06:00:00Z']);
      expect(slots(once)).toHaveLength(1);
    });

    it('does not fire a task whose schedule is switched off', async () => {
      const clock = new FakeClock('2026-04-01T00:00:00Z');
      const off = await addTask({ start_date: '2026-04-01 01:00:00', repeat_type: 0 }, 'UTC', clock, 1);
      const { s, slots } = scheduler(clock);
      await run(clock, s, '2026-04-01T00:00:00Z', '2026-04-03T00:00:00Z', 3600_000);
      expect(slots(off)).toEqual([]);
    });

    it('fires each slot exactly once with several processes ticking at the same moment', async () => {
      const clock = new FakeClock('2026-05-01T00:00:00Z');
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        ids.push(
          await addTask(
            { start_date: '2026-05-01 00:10:00', repeat_type: 0, hour: 0, minute: 10, second: 0 },
            'UTC',
            clock,
          ),
        );
      }
      // Three "processes", each with its own connection to the same database.
      const dbs = [getDb()];
      for (let i = 0; i < 2; i++) {
        const db = createDb({ url: fresh?.url ?? '' });
        extra.push(db);
        dbs.push(db);
      }
      const processes = dbs.map((db) => scheduler(clock, db));
      for (const step of [
        '2026-05-01T00:10:00Z',
        '2026-05-01T12:00:00Z',
        '2026-05-02T00:10:00Z',
        '2026-05-02T00:10:01Z',
      ]) {
        clock.set(step);
        await Promise.all(processes.flatMap((p) => [p.s.tick(), p.s.tick()]));
      }
      const all = processes.flatMap((p) => p.fired);
      for (const id of ids) {
        expect(
          all
            .filter((f) => f.id === id)
            .map((f) => f.slot)
            .sort(),
        ).toEqual(['2026-05-01T00:10:00Z', '2026-05-02T00:10:00Z']);
      }
    });
  });
