import { describe, expect, it } from 'vitest';
import { BILLING_MODES, PREMIUM_FEATURES, isPaid } from './index.ts';

describe('isPaid (spec section 4: type 1, expired 0, expire later than now)', () => {
  const now = new Date('2025-06-01T00:00:00Z');
  const nowSeconds = now.getTime() / 1000;
  const paid = { type: 1, expired: 0, expire: nowSeconds + 86_400 };

  it('is paid when all three conditions hold', () => {
    expect(isPaid(paid, now)).toBe(true);
  });
  it('is not paid when type is not 1', () => {
    expect(isPaid({ ...paid, type: 0 }, now)).toBe(false);
    expect(isPaid({ ...paid, type: 2 }, now)).toBe(false);
  });
  it('is not paid when expired is not 0', () => {
    expect(isPaid({ ...paid, expired: 1 }, now)).toBe(false);
  });
  it('is not paid when expire is now or earlier (unix seconds)', () => {
    expect(isPaid({ ...paid, expire: nowSeconds }, now)).toBe(false);
    expect(isPaid({ ...paid, expire: nowSeconds - 1 }, now)).toBe(false);
    expect(isPaid({ ...paid, expire: nowSeconds + 1 }, now)).toBe(true);
  });
  it('reads expire as seconds, not milliseconds', () => {
    // A millisecond value would be far in the future; a seconds value in the past must not pass.
    expect(isPaid({ ...paid, expire: Math.floor(new Date('2025-05-31T23:59:59Z').getTime() / 1000) }, now)).toBe(false);
  });
  it('is not paid without user info', () => {
    expect(isPaid(null, now)).toBe(false);
    expect(isPaid(undefined, now)).toBe(false);
  });
  it('compares with the current time by default', () => {
    const future = Math.floor(Date.now() / 1000) + 3600;
    expect(isPaid({ type: 1, expired: 0, expire: future })).toBe(true);
    expect(isPaid({ type: 1, expired: 0, expire: future - 7200 })).toBe(false);
  });
});

describe('billing', () => {
  it('has the three billing modes of DECISIONS', () => {
    expect(BILLING_MODES).toEqual(['off', 'test', 'stripe']);
  });
  it('lists the paid features of spec section 6, with cloud management free', () => {
    expect([...PREMIUM_FEATURES].sort()).toEqual(
      [
        'high_speed_traffic',
        'transfer',
        'sync',
        'offline_transfer',
        'scheduled_transfer',
        'file_filter',
        'duplicate_scan',
        'large_file_scan',
        'empty_folder_cleanup',
        'full_scan_results',
      ].sort(),
    );
    expect(PREMIUM_FEATURES as readonly string[]).not.toContain('cloud_management');
  });
});
