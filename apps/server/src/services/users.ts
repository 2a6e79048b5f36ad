import { createHash } from 'node:crypto';
import {
  DATA_PACKETS,
  DEFAULT_PRICES,
  defaultProductPrices,
  LICENSES,
  LIMITS,
  isPaid,
  toLanguage,
  type BillingMode,
  type DataPacketId,
  type Language,
  type LicenseId,
  type LicenseOffer,
  type ProductId,
  type MyDataPacket,
  type Subscription,
  type UserInfo,
  type UserRole,
  type UsersMeData,
} from '@skyferry/contract';
import type { DataPacketRow, LicenseRow, PlansRepository } from '../repositories/plans.ts';
import type { UserRow, UsersRepository } from '../repositories/users.ts';
import { newId } from './crypto.ts';

/** An account as the rest of the server sees it (never the password hash). */
export interface UserRecord {
  id: string;
  email: string;
  nickname: string;
  firstname: string;
  lastname: string;
  country: string;
  mobile: string;
  avatar: string;
  /** Where transfer e-mails go ('' in the row means the account e-mail; resolved here). */
  notifyEmail: string;
  remindMe: boolean;
  language: Language;
  /** Decided by the authorization module (the stored role, or SKYFERRY_ADMIN_EMAILS). */
  role: UserRole;
  createdAt: number;
}

export interface TrafficCharge {
  /** Bytes taken from packets. */
  charged: number;
  /** Bytes that found no room (0 when the whole amount was charged). */
  shortfall: number;
}

/** With billing off, every account is premium until this far-away date (2100-01-01, Unix seconds). */
export const UNLIMITED_EXPIRE = 4_102_444_800;

const seconds = (ms: number) => Math.floor(ms / 1000);

/** `months` calendar months after `from` (UTC), clamped to the month's last day. */
export function addMonths(from: number, months: number): number {
  const d = new Date(from);
  const target = new Date(
    Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime() + d.getUTCMilliseconds();
}

/** Prices in the smallest currency unit, by product, and their currency (operator configuration). */
export interface Pricing {
  currency: string;
  prices: Record<ProductId, number>;
}

const DEFAULT_PRICING: Pricing = { currency: DEFAULT_PRICES.currency, prices: defaultProductPrices() };

/** The licence plans on offer with their prices (DECISIONS: prices are configuration). */
export function licenseOffers(pricing: Pricing = DEFAULT_PRICING): LicenseOffer[] {
  return LICENSES.map((l) => ({
    id: l.id,
    name: l.name,
    period: l.period,
    months: l.months,
    monthly_allowance: l.monthlyAllowance,
    price: pricing.prices[l.id],
    currency: pricing.currency,
  }));
}

/**
 * Users and their plans: profile and notification settings, the paid check, licences and data
 * packets, and traffic accounting. With BILLING_MODE=off every account is premium with no cap.
 */
export class UsersService {
  private readonly users: UsersRepository;
  private readonly plans: PlansRepository;
  readonly billingMode: BillingMode;
  private readonly now: () => number;
  private readonly roleOf: (row: UserRow) => UserRole;
  private readonly pricing: Pricing;

  constructor(deps: {
    users: UsersRepository;
    plans: PlansRepository;
    billingMode: BillingMode;
    /** The authorization module's decision (services/authorization.ts); the stored role without it. */
    roleOf?: (row: UserRow) => UserRole;
    /** Prices and currency (BILLING_PRICES, BILLING_CURRENCY); the defaults without. */
    pricing?: Pricing;
    now?: () => number;
  }) {
    this.pricing = deps.pricing ?? DEFAULT_PRICING;
    this.users = deps.users;
    this.plans = deps.plans;
    this.billingMode = deps.billingMode;
    this.roleOf = deps.roleOf ?? ((row) => (row.role === 'operator' ? 'operator' : 'user'));
    this.now = deps.now ?? Date.now;
  }

  private toRecord(row: UserRow): UserRecord {
    return {
      id: row.id,
      email: row.email,
      nickname: row.nickname,
      firstname: row.firstname,
      lastname: row.lastname,
      country: row.country,
      mobile: row.mobile,
      avatar: row.avatar,
      notifyEmail: row.notify_email || row.email,
      remindMe: row.remind_me === 1,
      language: toLanguage(row.language) ?? 'en',
      role: this.roleOf(row),
      createdAt: row.created_at,
    };
  }

  /** The licence plans on offer at this server's prices (init, sign-in replies, /buy). */
  licenseOffers(): LicenseOffer[] {
    return licenseOffers(this.pricing);
  }

  async get(userId: string): Promise<UserRecord | undefined> {
    const row = await this.users.findById(userId);
    return row ? this.toRecord(row) : undefined;
  }

  async language(userId: string): Promise<Language> {
    return (await this.get(userId))?.language ?? 'en';
  }

  async setLanguage(userId: string, language: Language): Promise<void> {
    await this.users.updateLanguage(userId, language, this.now());
  }

  /** Where and whether to send transfer e-mails. */
  async notifySettings(userId: string): Promise<{ email: string; remindMe: boolean }> {
    const user = await this.get(userId);
    return { email: user?.notifyEmail ?? '', remindMe: user?.remindMe ?? false };
  }

  async setNotifySettings(userId: string, email: string, remindMe: boolean): Promise<void> {
    await this.users.updateNotify(userId, email, remindMe ? 1 : 0, this.now());
  }

  /** The user_info plan fields: type, expired, expire (seconds). */
  private async paidFields(userId: string, now: number): Promise<{ type: number; expired: number; expire: number }> {
    if (this.billingMode === 'off') return { type: 1, expired: 0, expire: UNLIMITED_EXPIRE };
    const latest = (await this.plans.licenses(userId))[0];
    if (!latest) return { type: 0, expired: 0, expire: 0 };
    return { type: 1, expired: latest.expires_at > now ? 0 : 1, expire: seconds(latest.expires_at) };
  }

  /** The spec's paid check; always true with billing off. */
  async isPremium(userId: string): Promise<boolean> {
    if (this.billingMode === 'off') return true;
    return isPaid(await this.paidFields(userId, this.now()), new Date(this.now()));
  }

  /**
   * Whether the account holds a licence now ('active'), held one that has ended ('expired', spec
   * code 4011001), or never had one ('none'). Always 'active' with billing off.
   */
  async licenceStatus(userId: string): Promise<'active' | 'expired' | 'none'> {
    if (this.billingMode === 'off') return 'active';
    const now = this.now();
    const fields = await this.paidFields(userId, now);
    if (isPaid(fields, new Date(now))) return 'active';
    return fields.type === 1 ? 'expired' : 'none';
  }

  /** How many clouds the account may connect: 20, or 5 on a free plan when billing is on. */
  async cloudLimit(userId: string): Promise<number> {
    return (await this.isPremium(userId)) ? LIMITS.maxCloudDrives : LIMITS.freeCloudDrives;
  }

  /** The licence running now, if any. */
  async activeLicense(userId: string, now: number): Promise<LicenseRow | undefined> {
    return (await this.plans.licenses(userId)).find((l) => l.started_at <= now && l.expires_at > now);
  }

  /** Creates the base packet of the licence month that contains `now`, once. */
  private async ensureBasePacket(userId: string, now: number): Promise<void> {
    const license = await this.activeLicense(userId, now);
    if (!license) return;
    const plan = LICENSES.find((l) => l.id === license.plan_id);
    if (!plan) return;
    const existing = await this.plans.packetsOfLicense(userId, license.id);
    let k = 0;
    while (addMonths(license.started_at, k + 1) <= now) k++;
    const startsAt = addMonths(license.started_at, k);
    if (existing.some((p) => p.kind === 'base' && p.starts_at === startsAt)) return;
    const endsAt = Math.min(addMonths(license.started_at, k + 1), license.expires_at);
    try {
      await this.plans.insertPacket({
        id: `${license.id}.${k}`,
        user_id: userId,
        kind: 'base',
        name: plan.name,
        size: plan.monthlyAllowance,
        usage: 0,
        starts_at: startsAt,
        ends_at: endsAt,
        license_id: license.id,
        created_at: now,
      });
    } catch {
      // A concurrent request created it (the id is deterministic).
    }
  }

  /** Packets that count now: base ones, and additional ones only under an active licence. */
  private async countingPackets(
    userId: string,
    now: number,
  ): Promise<{ base: DataPacketRow[]; additional: DataPacketRow[] }> {
    await this.ensureBasePacket(userId, now);
    const live = await this.plans.livePackets(userId, now);
    const licensed = (await this.activeLicense(userId, now)) !== undefined;
    // Bought packets are used after the base allowance, the oldest first.
    const additional = live
      .filter((p) => p.kind === 'additional')
      .sort((a, b) => a.starts_at - b.starts_at || a.created_at - b.created_at);
    return { base: live.filter((p) => p.kind === 'base'), additional: licensed ? additional : [] };
  }

  /** Bytes of traffic left; Infinity with billing off. */
  async remainingTraffic(userId: string): Promise<number> {
    if (this.billingMode === 'off') return Number.POSITIVE_INFINITY;
    const { base, additional } = await this.countingPackets(userId, this.now());
    return [...base, ...additional].reduce((sum, p) => sum + Math.max(0, p.size - p.usage), 0);
  }

  /**
   * Charges transferred bytes: base packets first (soonest-ending first), then additional ones.
   * With billing off nothing is counted. What finds no room is returned as the shortfall.
   */
  async chargeTraffic(userId: string, bytes: number, key?: string): Promise<TrafficCharge> {
    if (this.billingMode === 'off' || bytes <= 0) return { charged: Math.max(0, bytes), shortfall: 0 };
    if (key !== undefined) {
      // Once per key (one file of one run), however often a resumed run moves it again.
      const { base, additional } = await this.countingPackets(userId, this.now());
      const ids = [...base, ...additional].map((p) => p.id);
      const once = await this.plans.chargeOnce(userId, key, ids, Math.floor(bytes), this.now());
      return once.repeated
        ? { charged: once.charged, shortfall: 0 }
        : { charged: once.charged, shortfall: Math.floor(bytes) - once.charged };
    }
    let left = Math.floor(bytes);
    for (let attempt = 0; attempt < 3 && left > 0; attempt++) {
      const { base, additional } = await this.countingPackets(userId, this.now());
      for (const packet of [...base, ...additional]) {
        if (left <= 0) break;
        const take = Math.min(left, packet.size - packet.usage);
        if (take <= 0) continue;
        if (await this.plans.addUsage(userId, packet.id, take)) left -= take;
      }
      if (left === 0) break;
      // A concurrent charge may have taken room we saw: look again; a second empty pass ends it.
      if ((await this.remainingTraffic(userId)) === 0) break;
    }
    return { charged: Math.floor(bytes) - left, shortfall: left };
  }

  /**
   * Grants a licence (the built-in test checkout, an operator, or tests). It starts now, or when
   * the current licence of the account ends, and runs for the plan's months.
   */
  async grantLicense(
    userId: string,
    planId: LicenseId,
    options: {
      renewing?: boolean;
      source?: string;
      externalId?: string | null;
      startsAt?: number;
      /** The end, when not the plan's months after the start (an operator's --until, a provider's period). */
      expiresAt?: number;
    } = {},
  ): Promise<LicenseRow> {
    const plan = LICENSES.find((l) => l.id === planId);
    if (!plan) throw new Error(`unknown plan ${planId}`);
    const now = this.now();
    const current = await this.activeLicense(userId, now);
    const startsAt = options.startsAt ?? current?.expires_at ?? now;
    const row: LicenseRow = {
      id: newId(),
      user_id: userId,
      plan_id: plan.id,
      renewing: options.renewing === false ? 0 : 1,
      started_at: startsAt,
      expires_at: options.expiresAt ?? addMonths(startsAt, plan.months),
      source: options.source ?? 'grant',
      external_id: options.externalId ?? null,
      created_at: now,
      updated_at: now,
    };
    await this.plans.insertLicense(row);
    return row;
  }

  /** Stops a licence renewing (it still runs to its end). */
  async setRenewing(userId: string, licenseId: string, renewing: boolean): Promise<boolean> {
    return this.plans.updateLicense(userId, licenseId, { renewing: renewing ? 1 : 0, updated_at: this.now() });
  }

  /** Adds a bought data packet; it counts only while a licence is active, for a year at most. */
  async grantDataPacket(
    userId: string,
    packetId: DataPacketId | { name: string; size: number },
  ): Promise<DataPacketRow> {
    const packet = typeof packetId === 'string' ? DATA_PACKETS.find((p) => p.id === packetId) : packetId;
    if (!packet) throw new Error(`unknown data packet ${String(packetId)}`);
    const now = this.now();
    const row: DataPacketRow = {
      id: newId(),
      user_id: userId,
      kind: 'additional',
      name: packet.name,
      size: packet.size,
      usage: 0,
      starts_at: now,
      ends_at: addMonths(now, 12),
      license_id: null,
      created_at: now,
    };
    await this.plans.insertPacket(row);
    return row;
  }

  async userInfo(user: UserRecord): Promise<UserInfo> {
    const now = this.now();
    const paid = await this.paidFields(user.id, now);
    return {
      email: user.email,
      role: user.role,
      ...paid,
      is_paid: isPaid(paid, new Date(now)),
      notify_email: user.notifyEmail,
      remind_me: user.remindMe ? 1 : 0,
      avatar: user.avatar,
      avatar_md5: user.avatar ? createHash('md5').update(user.avatar).digest('hex') : '',
      country: user.country,
      firstname: user.firstname,
      lastname: user.lastname,
      mobile: user.mobile,
      nickname: user.nickname,
    };
  }

  async dataPackets(userId: string): Promise<MyDataPacket> {
    if (this.billingMode === 'off') return { base: [], additional: [] };
    const { base, additional } = await this.countingPackets(userId, this.now());
    const item = (p: DataPacketRow) => ({
      name: p.name,
      usage: p.usage,
      size: p.size,
      end_time: seconds(p.ends_at),
      deduction_time: seconds(p.starts_at),
    });
    return { base: base.map(item), additional: additional.map(item) };
  }

  async subscriptions(userId: string): Promise<Subscription[]> {
    if (this.billingMode === 'off') return [];
    const now = this.now();
    return (await this.plans.licenses(userId))
      .filter((l) => l.expires_at > now)
      .map((l) => ({
        data_packet_name: LICENSES.find((p) => p.id === l.plan_id)?.name ?? l.plan_id,
        purchase_state: l.renewing,
        expires_date: seconds(l.expires_at),
      }));
  }

  /** GET /api/users/me. */
  async me(userId: string): Promise<UsersMeData | undefined> {
    const user = await this.get(userId);
    if (!user) return undefined;
    const [user_info, my_data_packet, my_subscribe] = await Promise.all([
      this.userInfo(user),
      this.dataPackets(userId),
      this.subscriptions(userId),
    ]);
    return { user_info, my_data_packet, my_subscribe };
  }
}
