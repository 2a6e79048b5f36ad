/**
 * Shapes of the accounts and clouds calls the shell makes (spec sections 3 and 7), from the
 * contract's zod schemas (`api/accounts.ts`, `api/clouds.ts`).
 */
export type {
  AuthorizationData as AuthData,
  BindCloudsData,
  Cloud,
  CloudsMeData as CloudsMe,
  DataPacketItem,
  InitData,
  MyDataPacket as DataPackets,
  ServiceNotice,
  Subscription,
  SystemCloudKind as SystemCloud,
  TempTokenData as VisitorToken,
  UserInfo,
  UsersMeData as MeData,
} from '@skyferry/contract';

/** Times arrive as Unix seconds (packets, subscriptions, licences) or milliseconds; this reads both. */
export function toMs(t: number | string | null | undefined): number {
  if (t === null || t === undefined || t === '') return 0;
  const n = typeof t === 'string' ? (/^\d+$/.test(t) ? Number(t) : Date.parse(t)) : t;
  if (!Number.isFinite(n)) return 0;
  return n < 1e12 ? n * 1000 : n;
}
