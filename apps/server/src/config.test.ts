import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'skyferry-config-'));
});
afterEach(() => {
  rmSync(cwd, { recursive: true, force: true });
});

/** loadConfig's error message for an environment, or '' when it loads. */
function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env, cwd);
    return '';
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
}

describe('loadConfig defaults', () => {
  it('uses the documented defaults with an empty environment', () => {
    const config = loadConfig({}, cwd);
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.dataDir).toBe(join(cwd, 'data'));
    expect(config.databaseUrl).toBe(join(cwd, 'data', 'skyferry.db'));
    expect(config.redisUrl).toBeUndefined();
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
    expect(config.publicUrlExplicit).toBe(false);
    expect(config.billingMode).toBe('off');
    expect(config.smtpUrl).toBeUndefined();
    expect(config.mailFrom).toBe('Skyferry <no-reply@skyferry.local>');
    expect(config.outboxDir).toBe(join(cwd, 'data', 'outbox'));
    expect(config.workers).toBe(1);
    expect(config.serviceNotice).toBeUndefined();
    expect(config.logLevel).toBe('info');
    expect(config.webDist).toMatch(/apps[/\\]web[/\\]dist$/);
    expect(config.oauth).toEqual({});
  });

  it('creates the data dir', () => {
    const config = loadConfig({ SKYFERRY_DATA_DIR: 'nested/dir' }, cwd);
    expect(config.dataDir).toBe(join(cwd, 'nested', 'dir'));
    expect(statSync(config.dataDir).isDirectory()).toBe(true);
  });

  it('takes the values it is given', () => {
    const config = loadConfig(
      {
        PORT: '9090',
        HOST: '0.0.0.0',
        DATABASE_URL: 'postgres://u@db.example:5432/sky',
        REDIS_URL: 'redis://127.0.0.1:6379',
        SKYFERRY_SECRET: 'x'.repeat(40),
        PUBLIC_URL: 'https://sky.example.com/',
        BILLING_MODE: 'test',
        SMTP_URL: 'smtp://user:pass@mail.example:587',
        SKYFERRY_WORKERS: '0',
        LOG_LEVEL: 'warn',
        SKYFERRY_WEB_DIST: 'dist',
      },
      cwd,
    );
    expect(config.port).toBe(9090);
    expect(config.host).toBe('0.0.0.0');
    expect(config.databaseUrl).toBe('postgres://u@db.example:5432/sky');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.secret).toBe('x'.repeat(40));
    expect(config.publicUrl).toBe('https://sky.example.com');
    expect(config.publicUrlExplicit).toBe(true);
    expect(config.billingMode).toBe('test');
    expect(config.smtpUrl).toBe('smtp://user:pass@mail.example:587');
    expect(config.workers).toBe(0);
    expect(config.logLevel).toBe('warn');
    expect(config.webDist).toBe(join(cwd, 'dist'));
  });

  it('shows a wildcard host as 127.0.0.1 in the default public URL', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '8181' }, cwd).publicUrl).toBe('http://127.0.0.1:8181');
    expect(loadConfig({ HOST: '::', PORT: '8181' }, cwd).publicUrl).toBe('http://127.0.0.1:8181');
  });

  it('treats a variable set to an empty value as unset', () => {
    const config = loadConfig({ PORT: '', REDIS_URL: '', SMTP_URL: ' ', BILLING_MODE: '', PUBLIC_URL: '' }, cwd);
    expect(config.port).toBe(8080);
    expect(config.redisUrl).toBeUndefined();
    expect(config.smtpUrl).toBeUndefined();
    expect(config.billingMode).toBe('off');
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });
});

describe('loadConfig validation', () => {
  it.each(['abc', '70000', '65536', '-1', '80.5', '8080x'])('refuses PORT=%s, naming PORT', (port) => {
    const message = errorOf({ PORT: port });
    expect(message).toMatch(/^invalid configuration: PORT: /);
  });

  it('accepts PORT 0 (a free port) and 65535', () => {
    expect(loadConfig({ PORT: '0' }, cwd).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }, cwd).port).toBe(65535);
  });

  it.each(['off', 'test', 'stripe'])('accepts BILLING_MODE=%s', (mode) => {
    const stripe =
      mode === 'stripe' ? { STRIPE_SECRET_KEY: 'sk_test_123456', STRIPE_WEBHOOK_SECRET: 'whsec_123456' } : {};
    expect(loadConfig({ BILLING_MODE: mode, ...stripe }, cwd).billingMode).toBe(mode);
  });

  it('needs Stripe keys with BILLING_MODE=stripe; reads prices and currency, refusing unknown products', () => {
    expect(errorOf({ BILLING_MODE: 'stripe' })).toMatch(/STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
    const c = loadConfig({ BILLING_CURRENCY: 'gbp', BILLING_PRICES: 'year=5000, packet_100g=1500' }, cwd);
    expect(c.billing).toMatchObject({ currency: 'GBP', prices: { month: 999, year: 5000, packet_100g: 1500 } });
    expect(errorOf({ BILLING_PRICES: 'week=100' })).toMatch(/BILLING_PRICES: unknown product week/);
    expect(errorOf({ BILLING_PRICES: 'month=9.99' })).toMatch(/BILLING_PRICES: month/);
    expect(errorOf({ BILLING_CURRENCY: 'euro' })).toMatch(/BILLING_CURRENCY/);
  });

  it.each(['on', 'OFF', 'paid', 'true'])('refuses BILLING_MODE=%s, naming it', (mode) => {
    expect(errorOf({ BILLING_MODE: mode })).toMatch(/BILLING_MODE: /);
  });

  it('refuses malformed URLs, levels and worker counts, naming each variable', () => {
    expect(errorOf({ REDIS_URL: 'not a url' })).toMatch(/REDIS_URL: /);
    expect(errorOf({ PUBLIC_URL: 'sky.example.com' })).toMatch(/PUBLIC_URL: /);
    expect(errorOf({ SMTP_URL: '::' })).toMatch(/SMTP_URL: /);
    expect(errorOf({ LOG_LEVEL: 'verbose' })).toMatch(/LOG_LEVEL: /);
    expect(errorOf({ SKYFERRY_WORKERS: '65' })).toMatch(/SKYFERRY_WORKERS: /);
    expect(errorOf({ SKYFERRY_WORKERS: '-1' })).toMatch(/SKYFERRY_WORKERS: /);
  });

  it('names every bad variable at once', () => {
    const message = errorOf({ PORT: 'x', BILLING_MODE: 'y', LOG_LEVEL: 'z' });
    expect(message).toContain('PORT: ');
    expect(message).toContain('BILLING_MODE: ');
    expect(message).toContain('LOG_LEVEL: ');
  });

  it('refuses a SKYFERRY_SECRET shorter than 32 characters', () => {
    expect(errorOf({ SKYFERRY_SECRET: 'short' })).toMatch(/SKYFERRY_SECRET must have at least 32 characters/);
  });

  it('needs an OAuth client id and secret together', () => {
    expect(errorOf({ GOOGLE_CLIENT_ID: 'id' })).toMatch(/GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET/);
    expect(loadConfig({ GOOGLE_CLIENT_ID: 'id', GOOGLE_CLIENT_SECRET: 's' }, cwd).oauth.google).toEqual({
      clientId: 'id',
      clientSecret: 's',
    });
  });
});

describe('SKYFERRY_TRUST_PROXY', () => {
  it('trusts only proxies on this machine by default', () => {
    expect(loadConfig({}, cwd).trustProxy).toEqual(['loopback']);
  });

  it('takes true, false, or a list of addresses, ranges and range names', () => {
    expect(loadConfig({ SKYFERRY_TRUST_PROXY: 'true' }, cwd).trustProxy).toBe(true);
    expect(loadConfig({ SKYFERRY_TRUST_PROXY: 'FALSE' }, cwd).trustProxy).toBe(false);
    expect(
      loadConfig({ SKYFERRY_TRUST_PROXY: 'loopback, 10.0.0.0/8,192.168.1.7 , fd00::/8, uniquelocal' }, cwd).trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8', '192.168.1.7', 'fd00::/8', 'uniquelocal']);
  });

  it.each(['yes', '2', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/2', 'proxy.example.com', '300.1.1.1'])(
    'refuses %s, naming the variable',
    (value) => {
      expect(errorOf({ SKYFERRY_TRUST_PROXY: value })).toContain('SKYFERRY_TRUST_PROXY');
    },
  );
});

describe('SKYFERRY_ALLOW_PRIVATE_NETWORKS and SKYFERRY_CLOUD_TIMEOUT_MS', () => {
  it("allows no private network by default, and keeps the backends' own timeouts", () => {
    const config = loadConfig({}, cwd);
    expect(config.allowPrivateNetworks).toEqual([]);
    expect(config.cloudTimeoutMs).toBeUndefined();
    expect(loadConfig({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: ' ' }, cwd).allowPrivateNetworks).toEqual([]);
  });

  it('takes true, or addresses and CIDR ranges', () => {
    expect(loadConfig({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'True' }, cwd).allowPrivateNetworks).toBe(true);
    const list = loadConfig({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: '192.168.1.0/24, 10.0.0.7,fd00::/8' }, cwd);
    expect(list.allowPrivateNetworks).toHaveLength(3);
    expect(loadConfig({ SKYFERRY_CLOUD_TIMEOUT_MS: '1500' }, cwd).cloudTimeoutMs).toBe(1500);
  });

  it.each(['yes', 'nas.local', '10.0.0.0/33', '192.168.1.0/24,lan', '2130706433', 'loopback'])(
    'refuses %s at start, naming the variable',
    (value) => {
      expect(errorOf({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: value })).toContain('SKYFERRY_ALLOW_PRIVATE_NETWORKS');
    },
  );

  it('refuses a timeout that is not a number of milliseconds', () => {
    expect(errorOf({ SKYFERRY_CLOUD_TIMEOUT_MS: 'soon' })).toContain('SKYFERRY_CLOUD_TIMEOUT_MS');
    expect(errorOf({ SKYFERRY_CLOUD_TIMEOUT_MS: '5' })).toContain('SKYFERRY_CLOUD_TIMEOUT_MS');
  });
});

describe('the generated secret', () => {
  it('is generated once, with mode 0600, and reused', () => {
    const first = loadConfig({}, cwd);
    const file = join(cwd, 'data', 'secret');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.secret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.secret);
    const second = loadConfig({}, cwd);
    expect(second.secret).toBe(first.secret);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.secret);
  });

  it('differs between data dirs', () => {
    const a = loadConfig({ SKYFERRY_DATA_DIR: 'a' }, cwd).secret;
    const b = loadConfig({ SKYFERRY_DATA_DIR: 'b' }, cwd).secret;
    expect(a).not.toBe(b);
  });

  it('leaves no temporary file beside it', () => {
    loadConfig({}, cwd);
    expect(readdirSync(join(cwd, 'data'))).toEqual(['secret']);
  });

  it('is not written when SKYFERRY_SECRET is set', () => {
    const config = loadConfig({ SKYFERRY_SECRET: 's'.repeat(32) }, cwd);
    expect(config.secret).toBe('s'.repeat(32));
    expect(existsSync(join(cwd, 'data', 'secret'))).toBe(false);
  });

  it('refuses a secret file that was emptied or truncated', () => {
    mkdirSync(join(cwd, 'data'));
    writeFileSync(join(cwd, 'data', 'secret'), 'too short\n', { mode: 0o600 });
    expect(errorOf({})).toMatch(/secret must hold a secret of at least 32 characters/);
  });
});

describe('SKYFERRY_LOCAL_ROOTS', () => {
  it.each(['127.0.0.1', 'localhost', '::1'])('defaults to the home folder when HOST is loopback (%s)', (host) => {
    expect(loadConfig({ HOST: host }, cwd).localRoots).toEqual([homedir()]);
  });

  it.each(['0.0.0.0', '::', '192.168.1.10'])('defaults to no folder when HOST is %s', (host) => {
    expect(loadConfig({ HOST: host }, cwd).localRoots).toEqual([]);
  });

  it('takes a list, resolving relative entries against the working directory', () => {
    const roots = loadConfig({ SKYFERRY_LOCAL_ROOTS: ['/srv/a', 'rel', '', '/srv/b'].join(delimiter) }, cwd);
    expect(roots.localRoots).toEqual(['/srv/a', join(cwd, 'rel'), '/srv/b']);
  });

  it('is empty when set to an empty value, even on loopback', () => {
    expect(loadConfig({ HOST: '127.0.0.1', SKYFERRY_LOCAL_ROOTS: '' }, cwd).localRoots).toEqual([]);
  });

  it('marks the home-folder default, which applies to a single-user install only', () => {
    expect(loadConfig({ HOST: '127.0.0.1' }, cwd).localRootsDefault).toBe(true);
    expect(loadConfig({ HOST: '127.0.0.1', SKYFERRY_LOCAL_ROOTS: '/srv/a' }, cwd).localRootsDefault).toBe(false);
    expect(loadConfig({ HOST: '0.0.0.0' }, cwd).localRootsDefault).toBe(false);
  });
});

describe('SKYFERRY_ADMIN_EMAILS', () => {
  it('is a comma-separated list, trimmed and lower-cased', () => {
    expect(
      loadConfig({ SKYFERRY_ADMIN_EMAILS: ' Ada@Example.com, ,bob@example.org,ada@example.com' }, cwd).adminEmails,
    ).toEqual(['ada@example.com', 'bob@example.org']);
    expect(loadConfig({}, cwd).adminEmails).toEqual([]);
  });

  it('refuses an entry that is not an e-mail address', () => {
    expect(errorOf({ SKYFERRY_ADMIN_EMAILS: 'ada@example.com,admin' })).toMatch(/SKYFERRY_ADMIN_EMAILS entry .*admin/);
  });
});

describe('the server process', () => {
  it('stops at start with a message naming the bad variable', () => {
    const main = join(import.meta.dirname, 'main.ts');
    const result = spawnSync(process.execPath, [main], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, PORT: 'eighty', SKYFERRY_DATA_DIR: join(cwd, 'data') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('invalid configuration: PORT: ');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
