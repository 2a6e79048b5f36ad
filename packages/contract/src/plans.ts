/** User info fields the paid check reads. */
export interface PaidFields {
  type: number;
  expired: number;
  /** Unix seconds. */
  expire: number;
}

/** The paid check (spec section 4): type 1, expired 0, and expire later than now. */
export function isPaid(info: PaidFields | null | undefined, now: Date = new Date()): boolean {
  if (!info) return false;
  return info.type === 1 && info.expired === 0 && info.expire * 1000 > now.getTime();
}

export const BILLING_MODES = ['off', 'test', 'stripe'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

/** Features that need a licence when billing is on (spec section 6). Cloud management is free. */
export const PREMIUM_FEATURES = [
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
] as const;
export type PremiumFeature = (typeof PREMIUM_FEATURES)[number];
