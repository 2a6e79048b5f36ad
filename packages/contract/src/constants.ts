/** Business constants and limits of spec section 9 (and DECISIONS). Times are milliseconds. */

export const GB = 1024 ** 3;
export const MB = 1024 ** 2;

export const LIMITS = {
  /** Cloud drives a free account may connect (billing test/real only). */
  freeCloudDrives: 5,
  /** Cloud drives anyone may connect. */
  maxCloudDrives: 20,
  /** The "about to reach the maximum" warning shows from this many connected clouds. */
  cloudWarningFrom: 18,
  /** Temporary clouds bound to an account on login, most recently used first. */
  tempCloudsBoundOnLogin: 5,
  /** Embedded third-party apps open at once. */
  openApps: 15,
  /** Days a cloud's deleted files can be restored from its own trash. */
  restoreDeletedDays: 30,
  /** Days an unused visitor's temporary clouds are kept. */
  tempCloudExpiryDays: 30,
  /** Free users see this many clean-up results (one page). */
  freeCleanupResults: 20,
} as const;

export const REFUND_DAYS = 7;
export const QUESTIONNAIRE_REWARD_BYTES = 30 * GB;
export const DISCONTINUATION_NOTICE_DATE = '2024-07-24';
export const SUPPORT_CHANNEL = 3;

export const TIMEOUTS = {
  mainRequest: 60_000,
  embeddedHostRequest: 30_000,
  scriptChunkLoad: 120_000,
  surveyLoad: 5_000,
} as const;

export const INTERVALS = {
  /** Access-token refresh cadence. */
  tokenRefresh: 30 * 60_000,
  tokenRefreshRetries: 3,
  tokenRefreshRetryDelay: 1_000,
  /** Each running task is polled every 2 to 3 s. */
  progressPollMin: 2_000,
  progressPollMax: 3_000,
  /** The running list refreshes every 5 s while the transmission list is open. */
  runningListRefresh: 5_000,
  exportPoll: 1_000,
  /** After Buy, user info is polled every 10 s, about 5 more times. */
  buyPoll: 10_000,
  buyPollTimes: 5,
  cookieCheckStart: 8_000,
  onlineRedirectDelay: 750,
  offlineErrorDelay: 800,
  logoutReloadDelay: 800,
  toast: 3_000,
  /** Cloud space refresh is staggered by a random 1 to 2 s per cloud. */
  cloudSpaceStaggerMin: 1_000,
  cloudSpaceStaggerMax: 2_000,
  qrPanelHidden: 24 * 60 * 60_000,
  bannerBox: 24 * 60 * 60_000,
  tipDelay: 300,
  tipPositionCheck: 60,
} as const;

export const PAGE_SIZES = {
  tasks: 100,
  cleanup: 20,
  /** Default page of a folder listing (Skyferry's choice; the spec does not say). */
  files: 1000,
} as const;

export const CLEANUP_IMODE_DEFAULT = 7;
/** Default large-file threshold (DECISIONS: the spec does not give it). */
export const LARGE_FILE_THRESHOLD_DEFAULT = 100 * MB;

export const TASK_NAME_TRUNCATION = { threshold: 23, head: 7, tail: 6 } as const;
export const USAGE_COLOUR = { danger: 0.75, warn: 0.5 } as const;
export const STORAGE_BAR = { enough: 0.7, narrow: 0.9 } as const;
export const BUFFERS = { upload: 4 * MB, download: 2 * MB } as const;

export const TIP = {
  maxWidthMini: 200,
  maxWidthSmall: 288,
  highlightPaddingY: 4,
  highlightPaddingX: 8,
  highlightRadius: 8,
  flipThreshold: 0.95,
} as const;

export const FRONT_END_VERSION = '1.7.8';

export const PLATFORM = { web: 0, windows: 3, mac: 4 } as const;
export const PRODUCT_ID = { web: 9482, windows: 7920, mac: 8175 } as const;
/** Product id and version the embedded-app host client sends. */
export const EMBEDDED_HOST = {
  clientType: 1,
  productId: 1,
  productVersion: '1.0.0',
  language: 'en-us',
  /** The app key the host client names itself with. */
  appKey: 'skyferry-web',
} as const;

export type RuntimeEnv = 'web' | 'app-win' | 'app-mac';

/** Licence plans (auto-renewing, cancel any time) and their monthly allowance. */
export const LICENSES = [
  { id: 'month', name: '1 Month', period: 'monthly', months: 1, monthlyAllowance: 150 * GB },
  { id: 'quarter', name: '1 Quarter', period: 'quarterly', months: 3, monthlyAllowance: 200 * GB },
  { id: 'year', name: '1 Year', period: 'yearly', months: 12, monthlyAllowance: 400 * GB },
] as const;
export type LicenseId = (typeof LICENSES)[number]['id'];

/** Additional data packets; they work only with an active licence. */
export const DATA_PACKETS = [
  { id: 'packet_50g', name: '50G', size: 50 * GB },
  { id: 'packet_100g', name: '100G', size: 100 * GB },
] as const;
export type DataPacketId = (typeof DATA_PACKETS)[number]['id'];

/** Default prices in cents; operators override them (DECISIONS: prices and currency are configuration). */
export const DEFAULT_PRICES = {
  currency: 'USD',
  month: 999,
  quarter: 2499,
  year: 6999,
  packet_50g: 999,
  packet_100g: 1699,
} as const;

export const PRICING_PERIODS = ['monthly', 'quarterly', 'yearly'] as const;

/** What can be bought: a licence plan or a data packet. */
export const PRODUCT_IDS = ['month', 'quarter', 'year', 'packet_50g', 'packet_100g'] as const;
export type ProductId = (typeof PRODUCT_IDS)[number];
/** DEFAULT_PRICES by product (the operator's BILLING_PRICES replace some or all). */
export function defaultProductPrices(): Record<ProductId, number> {
  return Object.fromEntries(PRODUCT_IDS.map((p) => [p, DEFAULT_PRICES[p]])) as Record<ProductId, number>;
}
