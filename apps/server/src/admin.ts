import { LICENSES, type LicenseId, type OperatorPlan } from '@skyferry/contract';
import { createDb } from '@skyferry/db';
import { pino } from 'pino';
import { loadConfig } from './config.ts';
import { BillingRepository } from './repositories/billing.ts';
import { PlansRepository } from './repositories/plans.ts';
import { UsersRepository } from './repositories/users.ts';
import { BillingService } from './services/billing/index.ts';
import { UsersService } from './services/users.ts';

/** A plan change asked for on the server's host (`skyferry admin grant|revoke`), refused with a reason. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}

/**
 * The operator's plan changes from the command line, on the server's host: the server's own
 * configuration (its environment: DATABASE_URL or SKYFERRY_DATA_DIR, BILLING_MODE) and database,
 * the same billing service as the API's, audited with the actor `cli`.
 */
export async function adminPlan(
  env: Record<string, string | undefined>,
  cwd: string,
  action: { kind: 'grant'; email: string; plan: string; until?: Date } | { kind: 'revoke'; email: string },
): Promise<OperatorPlan> {
  const config = loadConfig(env, cwd);
  const db = createDb({ url: config.databaseUrl });
  try {
    await db.migrate();
    const usersRepo = new UsersRepository(db.kysely);
    const plans = new PlansRepository(db.kysely);
    const users = new UsersService({
      users: usersRepo,
      plans,
      billingMode: config.billingMode,
      pricing: config.billing,
    });
    const billing = new BillingService({
      mode: config.billingMode,
      config: config.billing,
      repo: new BillingRepository(db.kysely),
      plans,
      users,
      usersRepo,
      provider: undefined,
      log: pino({ level: 'silent' }),
    });
    const row = await usersRepo.findByEmail(action.email.trim().toLowerCase());
    if (!row) throw new AdminError(`no account has the e-mail ${action.email}`);
    if (action.kind === 'revoke') return await billing.revoke('cli', row.id);
    if (!LICENSES.some((l) => l.id === action.plan))
      throw new AdminError(`unknown plan "${action.plan}"; plans: ${LICENSES.map((l) => l.id).join(', ')}`);
    if (action.until && action.until.getTime() <= Date.now()) throw new AdminError('--until must be in the future');
    return await billing.grant('cli', row.id, action.plan as LicenseId, action.until?.getTime());
  } finally {
    await db.close();
  }
}
