import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { isIP } from 'node:net';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { BILLING_MODES, PRODUCT_IDS, defaultProductPrices, type ProductId } from '@skyferry/contract';
import { parseAllowList, type Cidr } from '@skyferry/providers';

/**
 * Configuration from the environment, validated once at start. Every variable is documented in
 * docs/configuration.md's table; keep the two in step.
 */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  SKYFERRY_DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().url().optional(),
  SKYFERRY_SECRET: z.string().min(32, 'SKYFERRY_SECRET must have at least 32 characters').optional(),
  PUBLIC_URL: z.string().url().optional(),
  BILLING_MODE: z.enum(BILLING_MODES).default('off'),
  SMTP_URL: z.string().url().optional(),
  MAIL_FROM: z.string().default('Skyferry <no-reply@skyferry.local>'),
  SKYFERRY_LOCAL_ROOTS: z.string().optional(),
  SKYFERRY_ADMIN_EMAILS: z.string().max(10_000).optional(),
  SKYFERRY_WEB_DIST: z.string().optional(),
  SKYFERRY_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  // Read by heap.ts before the configuration loads; here so that a wrong value is named.
  SKYFERRY_HEAP: z.enum(['balanced', 'size', 'speed']).default('balanced'),
  SKYFERRY_TASKS_PER_USER: z.coerce.number().int().min(1).max(64).default(2),
  SKYFERRY_TASKS_MAX: z.coerce.number().int().min(0).max(10_000).default(0),
  SKYFERRY_TASK_LEASE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(30_000),
  SKYFERRY_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,50}$/)
    .default('skyferry'),
  SKYFERRY_SERVICE_NOTICE: z.string().optional(),
  SKYFERRY_SERVICE_NOTICE_DATE: z.string().max(100).optional(),
  SKYFERRY_SERVICE_NOTICE_URL: z.string().url().optional(),
  SKYFERRY_ALLOWED_ORIGINS: z.string().optional(),
  SKYFERRY_TRUST_PROXY: z.string().max(2000).optional(),
  SKYFERRY_ALLOWED_HOSTS: z.string().max(2000).optional(),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  DROPBOX_CLIENT_ID: z.string().min(1).optional(),
  DROPBOX_CLIENT_SECRET: z.string().min(1).optional(),
  BOX_CLIENT_ID: z.string().min(1).optional(),
  BOX_CLIENT_SECRET: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Outbound connections to the clouds users connect by address (see outboundNetworks below).
  SKYFERRY_ALLOW_PRIVATE_NETWORKS: z.string().max(2000).optional(),
  SKYFERRY_CLOUD_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).optional(),
  // The run history of tasks (issue 35).
  SKYFERRY_RUN_HISTORY_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
  SKYFERRY_RUN_FILE_ROWS: z.coerce.number().int().min(0).max(100_000_000).default(100_000),
  // Support tickets (issue 39).
  SUPPORT_EMAIL: z.email().max(254).optional(),
  SKYFERRY_SUPPORT_PROBLEM_TYPES: z.string().max(2000).optional(),
  // Running it for many (issue 41): metrics and shutdown.
  SKYFERRY_METRICS_TOKEN: z.string().min(16, 'SKYFERRY_METRICS_TOKEN must have at least 16 characters').optional(),
  SKYFERRY_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SKYFERRY_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(25_000),
  // Buying (issue 38): prices, currency and the payment provider.
  BILLING_CURRENCY: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'BILLING_CURRENCY must be a three-letter currency code')
    .default('USD'),
  BILLING_PRICES: z.string().max(500).optional(),
  STRIPE_SECRET_KEY: z.string().min(8).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(8).optional(),
  STRIPE_API_URL: z.string().url().default('https://api.stripe.com'),
  // Exports and office documents (issue 37).
  SKYFERRY_EXPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(5 * 1024 ** 3),
  SKYFERRY_WOPI_CLIENT_URL: z.string().url().optional(),
  SKYFERRY_WOPI_TOKEN_TTL_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(86_400_000)
    .default(10 * 3_600_000),
  // Uploads across API processes: how the others reach this one.
  SKYFERRY_INTERNAL_URL: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  /** Master secret: credentials encryption and token signing keys derive from it. */
  secret: string;
  publicUrl: string;
  billingMode: Env['BILLING_MODE'];
  smtpUrl: string | undefined;
  mailFrom: string;
  outboxDir: string;
  /** Folders the local-folder cloud kind may use. */
  localRoots: string[];
  /**
   * The roots are the home-folder default (SKYFERRY_LOCAL_ROOTS unset, listening on loopback): they
   * apply only while the install has a single account (services/authorization.ts).
   */
  localRootsDefault: boolean;
  /** Accounts that are operators besides the first one (SKYFERRY_ADMIN_EMAILS), lower-cased. */
  adminEmails: string[];
  webDist: string;
  workers: number;
  /** Task runs of one user at once, across every worker. */
  tasksPerUser: number;
  /** Task runs at once across every worker; 0: no limit beyond each worker's own. */
  tasksMax: number;
  /** How long a task's lease lasts without a heartbeat before another worker resumes it. */
  taskLeaseMs: number;
  /** Prefix of Skyferry's keys in Redis. */
  redisPrefix: string;
  serviceNotice: string | undefined;
  serviceNoticeDate: string | undefined;
  serviceNoticeUrl: string | undefined;
  /** Origins besides PUBLIC_URL's whose windows may frame the account pages and receive their messages. */
  allowedOrigins: string[];
  /** Whether PUBLIC_URL was set (otherwise links are built from the address a request came to). */
  publicUrlExplicit: boolean;
  /**
   * Which connecting addresses may set X-Forwarded-For/-Proto/-Host (Fastify's trustProxy): proxy
   * addresses or ranges (or loopback, linklocal, uniquelocal), or true/false.
   */
  trustProxy: boolean | string[];
  /**
   * Host names the server answers besides loopback, PUBLIC_URL's and HOST's (SKYFERRY_ALLOWED_HOSTS);
   * an entry starting with a dot also covers every subdomain.
   */
  allowedHosts: string[];
  /** OAuth clients of the cloud services; a kind whose client is missing is unavailable. */
  oauth: Partial<Record<OAuthService, OAuthClient>>;
  logLevel: Env['LOG_LEVEL'];
  /**
   * Networks that clouds reached by address (WebDAV, S3-compatible, SFTP, FTP) may be on although
   * they are loopback, private or otherwise reserved: true for every address; empty, none.
   */
  allowPrivateNetworks: true | Cidr[];
  /** How long such a cloud's server may stay silent before a call fails; undefined: each backend's default. */
  cloudTimeoutMs: number | undefined;
  /** Days a task's run (and its files) is kept after it ends. */
  runHistoryDays: number;
  /** Most file rows one run keeps for each outcome (its counts stay whole). */
  runFileRows: number;
  /** Where support tickets are mailed (SUPPORT_EMAIL); undefined: the operator inbox only. */
  supportEmail: string | undefined;
  /** The feedback form's problem types (SKYFERRY_SUPPORT_PROBLEM_TYPES); undefined: the defaults; empty: none. */
  supportProblemTypes: string[] | undefined;
  /** Bearer token /metrics asks for; unset: /metrics is off on the public port. */
  metricsToken: string | undefined;
  /** A second port (on HOST) serving only /metrics and /healthz: for workers and in-cluster scrapes. */
  metricsPort: number | undefined;
  /** Longest a SIGTERM waits for running tasks to checkpoint and hand back their jobs before exiting. */
  shutdownTimeoutMs: number;
  /** Prices (smallest currency unit) of the licences and packets, their currency, and Stripe's keys. */
  billing: BillingConfig;
  /** Largest file an export may download from a download_url. */
  exportMaxBytes: number;
  /**
   * The office server (Collabora Online, OnlyOffice) that edits documents through this server's WOPI
   * host; undefined: no office server, and init advertises no wopi_url.
   */
  wopiClientUrl: string | undefined;
  /** How long a WOPI access token (one file, one user) lasts. */
  wopiTokenTtlMs: number;
  /** How the other API processes reach this one (parts of an upload it holds); undefined: found when it listens. */
  internalUrl: string | undefined;
}

export type OAuthService = 'google' | 'microsoft' | 'dropbox' | 'box';
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export class ConfigError extends Error {}

function oauthClients(e: Env): Partial<Record<OAuthService, OAuthClient>> {
  const pairs: Record<OAuthService, [string | undefined, string | undefined]> = {
    google: [e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET],
    microsoft: [e.MICROSOFT_CLIENT_ID, e.MICROSOFT_CLIENT_SECRET],
    dropbox: [e.DROPBOX_CLIENT_ID, e.DROPBOX_CLIENT_SECRET],
    box: [e.BOX_CLIENT_ID, e.BOX_CLIENT_SECRET],
  };
  const out: Partial<Record<OAuthService, OAuthClient>> = {};
  for (const [service, [clientId, clientSecret]] of Object.entries(pairs) as [OAuthService, [string?, string?]][]) {
    if (Boolean(clientId) !== Boolean(clientSecret)) {
      const env = service.toUpperCase();
      throw new ConfigError(`${env}_CLIENT_ID and ${env}_CLIENT_SECRET must be set together`);
    }
    if (clientId && clientSecret) out[service] = { clientId, clientSecret };
  }
  return out;
}

function parseOrigins(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      try {
        const url = new URL(o);
        // Custom schemes (a desktop shell's app://host) have no standard origin: scheme and host.
        if (url.origin !== 'null') return url.origin;
        if (!url.host) throw new Error('opaque');
        return `${url.protocol}//${url.host}`;
      } catch {
        throw new ConfigError(`SKYFERRY_ALLOWED_ORIGINS entry is not an origin: ${o}`);
      }
    });
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * SKYFERRY_TRUST_PROXY: unset means proxies on this machine only (loopback), so a client that
 * connects directly cannot choose its own address (per-address sign-in limits count the real one).
 */
function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (value === undefined) return ['loopback'];
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return v
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [addr = '', prefix, extra] = entry.split('/');
      const family = isIP(addr);
      const prefixOk =
        prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
      if (!PROXY_RANGE_NAMES.has(entry) && (family === 0 || !prefixOk || extra !== undefined)) {
        throw new ConfigError(
          `SKYFERRY_TRUST_PROXY entry is not an address, a range or loopback/linklocal/uniquelocal: ${entry}`,
        );
      }
      return entry;
    });
}

/** SKYFERRY_ALLOWED_HOSTS: comma-separated host names or addresses (no scheme, no port). */
function parseAllowedHosts(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1'),
    )
    .filter(Boolean)
    .map((h) => {
      if (isIP(h) === 0 && !/^\.?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(h)) {
        throw new ConfigError(`SKYFERRY_ALLOWED_HOSTS entry is not a host name or address: ${h}`);
      }
      return h.replace(/(.)\.$/, '$1');
    });
}

function parseAdminEmails(value: string | undefined): string[] {
  const emails = (value ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  for (const e of emails) {
    if (!/^[^\s@]+@[^\s@]+$/.test(e))
      throw new ConfigError(`SKYFERRY_ADMIN_EMAILS entry is not an e-mail address: ${e}`);
  }
  return [...new Set(emails)];
}

/** SKYFERRY_ALLOW_PRIVATE_NETWORKS: unset, no private network (the outbound guard refuses them all). */
function outboundNetworks(value: string | undefined): true | Cidr[] {
  try {
    return value === undefined ? [] : parseAllowList(value);
  } catch (err) {
    throw new ConfigError(`SKYFERRY_ALLOW_PRIVATE_NETWORKS: ${(err as Error).message} (or true)`);
  }
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

/**
 * Reads the secret from the data dir, generating it (0600) on first start. The file appears
 * atomically (written aside, then hard-linked into place), so an API and a worker process starting
 * together agree on one secret.
 */
function loadOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(aside, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
    chmodSync(aside, 0o600);
    try {
      linkSync(aside, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(aside, { force: true });
    }
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < 32) throw new ConfigError(`${file} must hold a secret of at least 32 characters`);
  return secret;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  // A variable set to an empty value (`REDIS_URL=` in a compose file) means "unset", not "";
  // except SKYFERRY_LOCAL_ROOTS, where empty means "no folders".
  const given = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => v !== undefined && (v.trim() !== '' || k === 'SKYFERRY_LOCAL_ROOTS')),
  );
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  const dataDir = resolve(cwd, e.SKYFERRY_DATA_DIR);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = e.SKYFERRY_SECRET ?? loadOrCreateSecret(dataDir);
  const databaseUrl = e.DATABASE_URL ?? join(dataDir, 'skyferry.db');
  const shownHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const publicUrl = (e.PUBLIC_URL ?? `http://${shownHost}:${e.PORT}`).replace(/\/+$/, '');
  const localRoots =
    e.SKYFERRY_LOCAL_ROOTS !== undefined
      ? e.SKYFERRY_LOCAL_ROOTS.split(delimiter)
          .filter(Boolean)
          .map((p) => resolve(cwd, p))
      : isLoopback(e.HOST)
        ? [homedir()]
        : [];
  for (const root of localRoots) {
    if (!isAbsolute(root)) throw new ConfigError(`SKYFERRY_LOCAL_ROOTS entry is not absolute: ${root}`);
  }
  const webDist = resolve(cwd, e.SKYFERRY_WEB_DIST ?? join(import.meta.dirname, '../../web/dist'));
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl,
    redisUrl: e.REDIS_URL,
    secret,
    publicUrl,
    billingMode: e.BILLING_MODE,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    outboxDir: join(dataDir, 'outbox'),
    localRoots,
    localRootsDefault: e.SKYFERRY_LOCAL_ROOTS === undefined && localRoots.length > 0,
    adminEmails: parseAdminEmails(e.SKYFERRY_ADMIN_EMAILS),
    webDist,
    workers: e.SKYFERRY_WORKERS,
    tasksPerUser: e.SKYFERRY_TASKS_PER_USER,
    tasksMax: e.SKYFERRY_TASKS_MAX,
    taskLeaseMs: e.SKYFERRY_TASK_LEASE_MS,
    redisPrefix: e.SKYFERRY_REDIS_PREFIX,
    serviceNotice: e.SKYFERRY_SERVICE_NOTICE,
    serviceNoticeDate: e.SKYFERRY_SERVICE_NOTICE_DATE,
    serviceNoticeUrl: e.SKYFERRY_SERVICE_NOTICE_URL,
    allowedOrigins: parseOrigins(e.SKYFERRY_ALLOWED_ORIGINS),
    publicUrlExplicit: e.PUBLIC_URL !== undefined,
    trustProxy: parseTrustProxy(e.SKYFERRY_TRUST_PROXY),
    allowedHosts: parseAllowedHosts(e.SKYFERRY_ALLOWED_HOSTS),
    oauth: oauthClients(e),
    logLevel: e.LOG_LEVEL,
    allowPrivateNetworks: outboundNetworks(e.SKYFERRY_ALLOW_PRIVATE_NETWORKS),
    cloudTimeoutMs: e.SKYFERRY_CLOUD_TIMEOUT_MS,
    runHistoryDays: e.SKYFERRY_RUN_HISTORY_DAYS,
    runFileRows: e.SKYFERRY_RUN_FILE_ROWS,
    supportEmail: e.SUPPORT_EMAIL,
    supportProblemTypes: parseProblemTypes(e.SKYFERRY_SUPPORT_PROBLEM_TYPES),
    metricsToken: e.SKYFERRY_METRICS_TOKEN,
    metricsPort: e.SKYFERRY_METRICS_PORT,
    shutdownTimeoutMs: e.SKYFERRY_SHUTDOWN_TIMEOUT_MS,
    billing: billingConfig(e),
    exportMaxBytes: e.SKYFERRY_EXPORT_MAX_BYTES,
    wopiClientUrl: e.SKYFERRY_WOPI_CLIENT_URL,
    wopiTokenTtlMs: e.SKYFERRY_WOPI_TOKEN_TTL_MS,
    internalUrl: e.SKYFERRY_INTERNAL_URL?.replace(/\/+$/, ''),
  };
}

export interface BillingConfig {
  currency: string;
  prices: Record<ProductId, number>;
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string } | undefined;
}

/** BILLING_PRICES is `product=amount` pairs (amounts in the smallest unit), e.g. `month=999,year=6999`. */
function billingConfig(e: Env): BillingConfig {
  const prices = defaultProductPrices();
  for (const pair of (e.BILLING_PRICES ?? '').split(',').filter((p) => p.trim() !== '')) {
    const [k, v] = pair.split('=').map((x) => x.trim());
    if (!k || !(PRODUCT_IDS as readonly string[]).includes(k))
      throw new ConfigError(`BILLING_PRICES: unknown product ${k ?? ''} (one of ${PRODUCT_IDS.join(', ')})`);
    if (!v || !/^\d{1,9}$/.test(v))
      throw new ConfigError(`BILLING_PRICES: ${k} needs a whole amount in the smallest unit`);
    prices[k as ProductId] = Number(v);
  }
  let stripe: BillingConfig['stripe'];
  if (e.BILLING_MODE === 'stripe') {
    if (!e.STRIPE_SECRET_KEY || !e.STRIPE_WEBHOOK_SECRET)
      throw new ConfigError('BILLING_MODE=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
    stripe = {
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      apiUrl: e.STRIPE_API_URL.replace(/\/+$/, ''),
    };
  }
  return { currency: e.BILLING_CURRENCY.toUpperCase(), prices, stripe };
}

/** `none`: the form has no problem type; otherwise comma-separated labels (each at most 100 characters). */
function parseProblemTypes(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (value.trim().toLowerCase() === 'none') return [];
  const types = [
    ...new Set(
      value
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  for (const t of types) {
    if (t.length > 100)
      throw new ConfigError(`SKYFERRY_SUPPORT_PROBLEM_TYPES entry is longer than 100 characters: ${t}`);
  }
  return types.length > 0 ? types : undefined;
}
