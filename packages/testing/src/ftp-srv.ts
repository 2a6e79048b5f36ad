import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';
import type { FtpServer } from './vsftpd.ts';
import { selfSignedCert } from './vsftpd.ts';

export interface FtpSrvOptions {
  /** Explicit FTPS (AUTH TLS) with a self-signed certificate. */
  tls?: boolean;
  /** The address PASV answers name (default the client's own); data connections are still served on 127.0.0.1. */
  pasvAddress?: string;
  /** Refuse EPSV (502), so clients must use PASV. */
  refuseEpsv?: boolean;
}

/**
 * Starts the npm `ftp-srv` server in this process on 127.0.0.1 over a temporary folder, with one
 * user and password; with `tls`, explicit FTPS (AUTH TLS) with a self-signed certificate.
 */
export async function startFtpSrv(
  opts: FtpSrvOptions = {},
): Promise<
  FtpServer & { /** Changes the user's password for logins from now on. */ changePassword(password: string): void }
> {
  const { FtpSrv } = await import('ftp-srv');
  const root = mkdtempSync(join(tmpdir(), 'skyferry-ftpsrv-'));
  const dir = join(root, 'data');
  mkdirSync(dir);
  const port = await freePort();
  const pasvMin = await freePort();
  const username = 'skyferry';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  let current = password;
  const cert = opts.tls ? await selfSignedCert(root) : undefined;
  const server = new FtpSrv({
    url: `ftp://127.0.0.1:${port}`,
    // A function, as ftp-srv answers a string with the client's own address when it is local.
    // (ftp-srv takes one, though its types do not say so).
    pasv_url: (opts.pasvAddress ? () => opts.pasvAddress : '127.0.0.1') as string,
    ...(opts.refuseEpsv ? { blacklist: ['EPSV'] } : {}),
    pasv_min: pasvMin,
    pasv_max: pasvMin + 200,
    anonymous: false,
    greeting: 'skyferry test server',
    tls: cert ? { key: readFileSync(cert.keyPath), cert: readFileSync(cert.certPath) } : false,
    // ftp-srv logs through bunyan; keep the test output quiet.
    log: quietLogger(),
  });
  server.on('login', ({ username: u, password: p }, resolve, reject) => {
    if (u === username && p === current) resolve({ root: dir, cwd: '/' });
    else reject(new Error('bad login'));
  });
  await server.listen();
  return {
    host: '127.0.0.1',
    port,
    username,
    password,
    dir,
    root: '/',
    ...(cert ? { certPem: cert.pem, certFingerprint256: cert.fingerprint256 } : {}),
    changePassword(pw) {
      current = pw;
    },
    async stop() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

interface QuietLogger {
  child(): QuietLogger;
  trace(): void;
  debug(): void;
  info(): void;
  warn(): void;
  error(): void;
  fatal(): void;
}

function quietLogger(): QuietLogger {
  const noop = () => undefined;
  const log: QuietLogger = {
    child: () => log,
    trace: noop,
    debug: noop,
    info: noop,
    warn: noop,
    error: noop,
    fatal: noop,
  };
  return log;
}
