import { expect, it } from 'vitest';
import { GB } from '@skyferry/contract';
import { describeEachDialect } from '@skyferry/db/testing';
import { PlansRepository } from '../repositories/plans.ts';
import { UsersRepository } from '../repositories/users.ts';
import { UNLIMITED_EXPIRE, UsersService, addMonths } from './users.ts';

it('adds calendar months, clamped to the last day of the month', () => {
  expect(new Date(addMonths(Date.UTC(2025, 0, 31, 10), 1)).toISOString()).toBe('2025-02-28T10:00:00.000Z');
  expect(new Date(addMonths(Date.UTC(2024, 0, 31), 1)).toISOString()).toBe('2024-02-29T00:00:00.000Z');
  expect(new Date(addMonths(Date.UTC(2025, 10, 15), 3)).toISOString()).toBe('2026-02-15T00:00:00.000Z');
  expect(new Date(addMonths(Date.UTC(2025, 4, 31), 12)).toISOString()).toBe('2026-05-31T00:00:00.000Z');
});

describeEachDialect('UsersService plans and traffic', (getDb) => {
  let clock = Date.UTC(2025, 0, 10);
  let n = 0;
  const make = async (billingMode: 'off' | 'test') => {
    const db = getDb().kysely;
    const users = new UsersRepository(db);
    const id = `u${++n}-${billingMode}`;
    await users.insert({
      id,
      email: `${id}@example.com`,
      password_hash: 'x',
      nickname: '',
      firstname: '',
      lastname: '',
      country: '',
      mobile: '',
      avatar: '',
      notify_email: '',
      remind_me: 1,
      language: 'fr',
      created_at: clock,
      updated_at: clock,
    });
    const service = new UsersService({ users, plans: new PlansRepository(db), billingMode, now: () => clock });
    return { id, service };
  };

  it('with billing off: premium, unlimited, nothing charged', async () => {
    const { id, service } = await make('off');
    expect(await service.isPremium(id)).toBe(true);
    expect(await service.remainingTraffic(id)).toBe(Number.POSITIVE_INFINITY);
    expect(await service.chargeTraffic(id, 10 * GB)).toEqual({ charged: 10 * GB, shortfall: 0 });
    const me = await service.me(id);
    expect(me?.user_info).toMatchObject({ type: 1, expired: 0, expire: UNLIMITED_EXPIRE, is_paid: true });
    expect(await service.cloudLimit(id)).toBe(20);
    expect(await service.language(id)).toBe('fr');
  });

  it('with billing on: free, then licensed with a monthly base packet; base first, then additional', async () => {
    const { id, service } = await make('test');
    expect(await service.isPremium(id)).toBe(false);
    expect(await service.remainingTraffic(id)).toBe(0);
    expect(await service.cloudLimit(id)).toBe(5);
    expect((await service.me(id))?.user_info).toMatchObject({ type: 0, expired: 0, expire: 0, is_paid: false });
    // A packet bought without a licence does not count.
    await service.grantDataPacket(id, 'packet_50g');
    expect(await service.remainingTraffic(id)).toBe(0);
    expect((await service.chargeTraffic(id, GB)).shortfall).toBe(GB);

    const license = await service.grantLicense(id, 'month');
    expect(await service.isPremium(id)).toBe(true);
    expect(await service.remainingTraffic(id)).toBe(150 * GB + 50 * GB);
    const me = await service.me(id);
    expect(me?.user_info).toMatchObject({
      type: 1,
      expired: 0,
      is_paid: true,
      expire: Math.floor(license.expires_at / 1000),
    });
    expect(me?.my_data_packet.base).toEqual([
      {
        name: '1 Month',
        usage: 0,
        size: 150 * GB,
        end_time: Math.floor(license.expires_at / 1000),
        // Deducted from since the licence month began (ENT-USR-10).
        deduction_time: Math.floor(license.started_at / 1000),
      },
    ]);
    expect(me?.my_data_packet.additional).toHaveLength(1);
    expect(me?.my_subscribe).toEqual([
      { data_packet_name: '1 Month', purchase_state: 1, expires_date: Math.floor(license.expires_at / 1000) },
    ]);

    expect(await service.chargeTraffic(id, 100 * GB)).toEqual({ charged: 100 * GB, shortfall: 0 });
    let packets = (await service.me(id))?.my_data_packet;
    expect(packets?.base[0]?.usage).toBe(100 * GB);
    expect(packets?.additional[0]?.usage).toBe(0);
    // 50 GB left in the base packet, then 30 from the additional one.
    expect(await service.chargeTraffic(id, 80 * GB)).toEqual({ charged: 80 * GB, shortfall: 0 });
    packets = (await service.me(id))?.my_data_packet;
    expect([packets?.base[0]?.usage, packets?.additional[0]?.usage]).toEqual([150 * GB, 30 * GB]);
    expect(await service.chargeTraffic(id, 25 * GB)).toEqual({ charged: 20 * GB, shortfall: 5 * GB });
    expect(await service.remainingTraffic(id)).toBe(0);
    expect(await service.setRenewing(id, license.id, false)).toBe(true);
    expect((await service.subscriptions(id))[0]?.purchase_state).toBe(0);

    // After the licence ends: type 1, expired 1, not paid, free limits again.
    clock = license.expires_at + 1000;
    expect((await service.me(id))?.user_info).toMatchObject({ type: 1, expired: 1, is_paid: false });
    expect(await service.isPremium(id)).toBe(false);
    expect(await service.cloudLimit(id)).toBe(5);
    clock = Date.UTC(2025, 0, 10);
  });

  it('a yearly licence gets a fresh base packet each month', async () => {
    const { id, service } = await make('test');
    const start = clock;
    await service.grantLicense(id, 'year');
    await service.chargeTraffic(id, 300 * GB);
    expect(await service.remainingTraffic(id)).toBe(100 * GB);
    clock = addMonths(start, 1) + 60_000;
    expect(await service.remainingTraffic(id)).toBe(400 * GB);
    const base = (await service.me(id))?.my_data_packet.base;
    expect(base).toHaveLength(1);
    expect(base?.[0]?.end_time).toBe(Math.floor(addMonths(start, 2) / 1000));
    // The second month's allowance is deducted from that month's first day.
    expect(base?.[0]?.deduction_time).toBe(Math.floor(addMonths(start, 1) / 1000));
    clock = start;
  });

  it('renewing before the end starts the next licence when the current one ends', async () => {
    const { id, service } = await make('test');
    const first = await service.grantLicense(id, 'month');
    const second = await service.grantLicense(id, 'quarter');
    expect(second.started_at).toBe(first.expires_at);
    expect((await service.me(id))?.user_info.expire).toBe(Math.floor(second.expires_at / 1000));
  });
});
