import { sql } from 'kysely';
import type { Logger } from 'pino';
import { MetaRepository, createDb, type Db } from '@skyferry/db';
import { OutboundGuard } from '@skyferry/providers';
import type { Config } from './config.ts';
import { secureDataDir } from './data-dir.ts';
import { CloudsRepository } from './repositories/clouds.ts';
import { PlansRepository } from './repositories/plans.ts';
import { RateLimitsRepository } from './repositories/rate-limits.ts';
import { SessionsRepository } from './repositories/sessions.ts';
import { UsersRepository } from './repositories/users.ts';
import { TasksRepository } from './repositories/tasks.ts';
import { Metrics } from './services/metrics.ts';
import { VisitorsRepository } from './repositories/visitors.ts';
import { AccountTokensRepository } from './repositories/account-tokens.ts';
import { AccountSettingsService } from './services/account-settings.ts';
import { AccountsService } from './services/accounts.ts';
import { createMailer } from './services/mail/index.ts';
import { Authorization, serverFilesOf } from './services/authorization.ts';
import { CloudsService } from './services/clouds.ts';
import { configureOAuthFromConfig } from './services/oauth.ts';
import { FilesService } from './services/files/index.ts';
import { ExportsService } from './services/exports/index.ts';
import { ExportTasksRepository } from './repositories/exports.ts';
import { WopiService } from './services/wopi/index.ts';
import { WopiLocksRepository } from './repositories/wopi-locks.ts';
import { SecretBox } from './services/crypto.ts';
import { TokenService } from './services/tokens.ts';
import { OperatorService } from './services/operator.ts';
import { UsersService } from './services/users.ts';
import { SupportRepository } from './repositories/support.ts';
import { UploadSessionsRepository } from './repositories/upload-sessions.ts';
import { SupportService } from './services/support.ts';
import { ReleaseNotes } from './services/release-notes.ts';
import { createTaskSystem, type TaskSystem } from './jobs/index.ts';
import type { TasksService } from './services/tasks/index.ts';
import { EcologyRepository } from './repositories/ecology.ts';
import { EcologyService } from './services/ecology/index.ts';
import { createCleanupSystem, type CleanupService, type CleanupSystem } from './services/cleanup/index.ts';
import { BillingRepository } from './repositories/billing.ts';
import { BillingService, type PaymentProvider } from './services/billing/index.ts';
import { StripeProvider } from './services/billing/stripe.ts';
import { TestProvider } from './services/billing/test-provider.ts';

/**
 * What the API and worker processes are built from: configuration, the database and the services
 * (use cases). Routes receive it; nothing below the services reads the environment.
 */
export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly log: Logger;
  /** Credential encryption and token MAC keys, derived from the master secret. */
  readonly secrets: SecretBox;
  /** Sessions, access/refresh/auto-login tokens, visitor tokens. */
  readonly tokens: TokenService;
  /** Sign-up, sign-in, grants, logout. */
  readonly accounts: AccountsService;
  /** The account's own settings: password, e-mail, forgotten password, sessions, deleting it. */
  readonly accountSettings: AccountSettingsService;
  /** Users, plans, the paid check, traffic accounting. */
  readonly users: UsersService;
  /** Who may do what: visitor, user, operator; what each may connect and reach (services/authorization.ts). */
  readonly authz: Authorization;
  /** The operator's calls: accounts and local-folder grants. */
  readonly operator: OperatorService;
  /** The clouds registry and connected clouds (open, markExpired, touch). */
  readonly clouds: CloudsService;
  /** File calls of connected clouds: listing cache, providers pool, uploads, downloads (services/files). */
  readonly files: FilesService;
  /** Exports into a cloud: start-upload and poll-progress (services/exports). */
  readonly exports: ExportsService;
  /** The WOPI host for an operator's office server (services/wopi). */
  readonly wopi: WopiService;
  /** Server tasks: create, list, run, retry, cancel, schedule (services/tasks). */
  readonly tasks: TasksService;
  /** The task queue, progress store, scheduler and in-process workers. */
  readonly taskSystem: TaskSystem;
  /** Clean-up scans (empty folders, duplicates, large files), their results and deletion (services/cleanup). */
  readonly cleanup: CleanupService;
  /** The clean-up scan queue and its in-process workers. */
  readonly cleanupSystem: CleanupSystem;
  /** Feedback tickets and the operator's inbox. */
  readonly support: SupportService;
  /** Buying: offers, checkout, the licence lifecycle from provider events, refunds, plan grants. */
  readonly billing: BillingService;
  /** The server's version and its release notes (CHANGELOG.md). */
  readonly releaseNotes: ReleaseNotes;
  /** This process's Prometheus metrics (services/metrics.ts). */
  readonly metrics: Metrics;
  /** The app registry (first-party and operator-registered apps) and the tokens handed to apps. */
  readonly ecology: EcologyService;
  /** Throws when the process cannot serve (database unreachable). */
  health(): Promise<void>;
  close(): Promise<void>;
}

export async function createContext(config: Config, log: Logger, role: 'api' | 'worker' = 'api'): Promise<AppContext> {
  secureDataDir(config, log);
  const db = createDb({ url: config.databaseUrl });
  // Backends refresh OAuth tokens with the operator's clients (API and worker processes alike).
  configureOAuthFromConfig(config);
  await db.migrate();
  const closers: Array<() => Promise<void>> = [];
  const secrets = new SecretBox(config.secret);
  const tokens = new TokenService({
    sessions: new SessionsRepository(db.kysely),
    visitors: new VisitorsRepository(db.kysely),
    box: secrets,
  });
  const usersRepo = new UsersRepository(db.kysely);
  const authz = new Authorization({
    users: usersRepo,
    meta: new MetaRepository(db.kysely),
    adminEmails: config.adminEmails,
    localRoots: config.localRoots,
    localRootsDefault: config.localRootsDefault,
    serverFiles: serverFilesOf(config),
    log,
  });
  const plans = new PlansRepository(db.kysely);
  const users = new UsersService({
    users: usersRepo,
    plans,
    billingMode: config.billingMode,
    roleOf: (row) => authz.roleOfAccount(row),
    pricing: config.billing,
  });
  const billing = createBilling(config, { db, plans, users, usersRepo, log });
  const rateLimits = new RateLimitsRepository(db.kysely);
  const accounts = new AccountsService({
    users: usersRepo,
    userService: users,
    tokens,
    limits: rateLimits,
    operators: authz,
    mailDelivers: config.smtpUrl !== undefined,
  });
  const operator = new OperatorService({ users: usersRepo, authz, log });
  const outbound = new OutboundGuard(config.allowPrivateNetworks);
  const clouds = new CloudsService({
    repo: new CloudsRepository(db.kysely),
    users,
    box: secrets,
    log,
    authz,
    oauthConfigured: (service) => config.oauth[service] !== undefined,
    outbound,
    cloudTimeoutMs: config.cloudTimeoutMs,
  });
  const uploadSessions = new UploadSessionsRepository(db.kysely);
  const files = new FilesService({ clouds, box: secrets, log, uploadRegistry: uploadSessions });
  closers.push(() => files.close());
  const ecology = new EcologyService({ repo: new EcologyRepository(db.kysely), files, clouds, authz, log });
  // Exports (issue 37): a download_url is held to the clouds' outbound guard; stopped before the files service closes.
  const exportsService = new ExportsService({
    repo: new ExportTasksRepository(db.kysely),
    files,
    guard: outbound,
    maxBytes: config.exportMaxBytes,
    timeoutMs: config.cloudTimeoutMs,
    log,
    // Exports count against the plan's transfer data like tasks (nothing is counted with billing off).
    traffic: {
      remaining: (userId) => users.remainingTraffic(userId),
      charge: (userId, bytes, key) => users.chargeTraffic(userId, bytes, key),
    },
  });
  closers.push(() => exportsService.close());
  // Office documents (issue 37): the WOPI host, on when SKYFERRY_WOPI_CLIENT_URL names an office server.
  const wopi = new WopiService({
    files,
    box: secrets,
    locks: new WopiLocksRepository(db.kysely),
    sessionActive: (id) => tokens.sessionActive(id),
    officeUrl: config.wopiClientUrl,
    tokenTtlMs: config.wopiTokenTtlMs,
    maxBytes: config.exportMaxBytes,
  });
  // Housekeeping: expired tokens, idle visitors and their temporary clouds, old rate-limit windows.
  const accountLinks = new AccountTokensRepository(db.kysely);
  const housekeeping = async () => {
    try {
      await tokens.purgeExpired();
      await accountLinks.purgeExpired(Date.now());
      await clouds.purgeUnusedTemporary();
      await tokens.purgeIdleVisitors();
      await rateLimits.purgeExpired(Date.now());
      await ecology.purgeExpired();
      // A run is resumed within days; its files' charge keys are kept well past that.
      await plans.purgeCharges(Date.now() - 90 * 86_400_000);
      await uploadSessions.purgeExpired(Date.now());
    } catch (err) {
      log.warn({ err }, 'housekeeping failed');
    }
  };
  const housekeepingTimer = setInterval(() => void housekeeping(), 60 * 60_000);
  housekeepingTimer.unref();
  closers.push(async () => clearInterval(housekeepingTimer));
  // The built-in test checkout renews its licences when they run out (a provider does it by webhook).
  if (billing.provider?.name === 'test') {
    const billingTimer = setInterval(
      () => void billing.tick().catch((err: unknown) => log.warn({ err }, 'billing renewals failed')),
      60_000,
    );
    billingTimer.unref();
    closers.push(async () => clearInterval(billingTimer));
  }
  // Tasks: the queue, the scheduler, and workers in this process when SKYFERRY_WORKERS > 0.
  const tasksRepo = new TasksRepository(db.kysely);
  const metrics = new Metrics({ process: role, taskStates: () => tasksRepo.countByState() });
  const taskSystem = createTaskSystem({ config, db, log, clouds, users, metrics });
  closers.push(() => taskSystem.close());
  if (config.workers > 0) await taskSystem.startWorkers(config.workers);
  // Clean-up scans: their own queue (jobs of type cleanup_scan), run by the same worker processes.
  const cleanupSystem = createCleanupSystem({ config, db, log, clouds, users });
  closers.push(() => cleanupSystem.close());
  if (config.workers > 0) await cleanupSystem.startWorkers(config.workers);
  // Account e-mails (reset links, address changes) go out through SMTP_URL or the outbox, as task e-mails do.
  const accountMailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: config.outboxDir });
  closers.push(async () => accountMailer.close());
  const accountSettings = new AccountSettingsService({
    users: usersRepo,
    accounts,
    tokens,
    links: accountLinks,
    limits: rateLimits,
    authz,
    mailer: accountMailer,
    closures: [taskSystem.tasks, cleanupSystem.service],
    publicUrl: config.publicUrl,
    log,
  });
  const support = new SupportService({
    repo: new SupportRepository(db.kysely),
    limits: rateLimits,
    authz,
    mailer: accountMailer,
    supportEmail: config.supportEmail,
    problemTypes: config.supportProblemTypes,
    publicUrl: config.publicUrl,
    log,
  });
  return {
    config,
    db,
    support,
    billing,
    releaseNotes: new ReleaseNotes(),
    log,
    secrets,
    tokens,
    accounts,
    accountSettings,
    users,
    authz,
    operator,
    clouds,
    files,
    exports: exportsService,
    wopi,
    tasks: taskSystem.tasks,
    taskSystem,
    cleanup: cleanupSystem.service,
    cleanupSystem,
    metrics,
    ecology,
    async health() {
      await sql`select 1`.execute(db.kysely);
    },
    async close() {
      for (const close of closers.reverse()) await close();
      await db.close();
    },
  };
}

/** The billing service with the provider BILLING_MODE names (none with billing off). */
function createBilling(
  config: Config,
  deps: { db: Db; plans: PlansRepository; users: UsersService; usersRepo: UsersRepository; log: Logger },
): BillingService {
  let provider: PaymentProvider | undefined;
  if (config.billingMode === 'test') provider = new TestProvider();
  else if (config.billingMode === 'stripe' && config.billing.stripe)
    provider = new StripeProvider(config.billing.stripe);
  return new BillingService({
    mode: config.billingMode,
    config: config.billing,
    repo: new BillingRepository(deps.db.kysely),
    plans: deps.plans,
    users: deps.users,
    usersRepo: deps.usersRepo,
    provider,
    log: deps.log,
  });
}
