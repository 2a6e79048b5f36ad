import { formatDate, isPaid, usageColour } from '@skyferry/contract';
import type { UserState } from '../session/store.ts';
import { toMs, type DataPacketItem } from '../session/types.ts';

export interface PacketUsage {
  used: number;
  total: number;
  /** 0..100 for the bar. */
  percent: number;
  colour: 'red' | 'orange' | 'blue';
}

/** The sum of a packet list's usage and size, with the bar colour (above .75 danger, above .5 warn). */
export function packetUsage(items: readonly DataPacketItem[]): PacketUsage {
  const used = items.reduce((n, p) => n + (p.usage || 0), 0);
  const total = items.reduce((n, p) => n + (p.size || 0), 0);
  const colour = usageColour(used, total);
  return {
    used,
    total,
    percent: total > 0 ? Math.min(100, (used / total) * 100) : 0,
    colour: colour === 'danger' ? 'red' : colour === 'warn' ? 'orange' : 'blue',
  };
}

export interface PlanLine {
  /** The plan's name, or null for the free plan. */
  name: string | null;
  /** "Next billing date" when the subscription renews (purchase_state 1), else "Expired date". */
  dateLabel: 'nextBilling' | 'expiredDate' | null;
  /** YYYY/MM/DD. */
  date: string | null;
}

/** The plan line of the user panel (spec section 2). */
export function planLine(user: Pick<UserState, 'info' | 'subscribe'>, timeZone?: string): PlanLine {
  const sub = user.subscribe[0];
  if (sub) {
    const ms = toMs(sub.expires_date);
    return {
      name: sub.data_packet_name,
      dateLabel: sub.purchase_state === 1 ? 'nextBilling' : 'expiredDate',
      date: ms ? formatDate(ms, timeZone) : null,
    };
  }
  if (user.info && user.info.type === 1 && user.info.expire > 0) {
    return { name: null, dateLabel: 'expiredDate', date: formatDate(user.info.expire * 1000, timeZone) };
  }
  return { name: null, dateLabel: null, date: null };
}

export function paid(user: Pick<UserState, 'info'>, now = new Date()): boolean {
  return isPaid(user.info, now);
}
