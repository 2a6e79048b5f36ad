import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireProgram, run, startDaemon, waitFor } from './process.ts';

export interface FtpServer {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
  /** The folder the tests write to (on disk). */
  readonly dir: string;
  /** The remote folder that holds `dir`, to give as the `root` credential ("/" when the login starts there). */
  readonly root: string;
  /** With TLS: the server's self-signed certificate (PEM) and its SHA-256 fingerprint. */
  readonly certPem?: string;
  readonly certFingerprint256?: string;
  stop(): Promise<void>;
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('220'));
    });
    s.once('error', () => resolve(false));
  });
}

/** A throwaway self-signed certificate for 127.0.0.1 (Debian's openssl). */
export async function selfSignedCert(
  dir: string,
): Promise<{ certPath: string; keyPath: string; pem: string; fingerprint256: string }> {
  const openssl = await requireProgram('openssl', 'openssl');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  await run(openssl, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  const pem = readFileSync(certPath, 'utf8');
  return { certPath, keyPath, pem, fingerprint256: new X509Certificate(pem).fingerprint256 };
}

/**
 * Starts vsftpd (Debian's `vsftpd`) on 127.0.0.1 from a generated configuration: anonymous login
 * with write rights (upload, mkdir, rename, delete) to a temporary folder, passive mode on free
 * ports. With `tls`, explicit FTPS (AUTH TLS) is required for login and data, with a self-signed
 * certificate. vsftpd runs as root only (it drops to the `ftp` user for anonymous sessions).
 */
export async function startVsftpd(opts: { tls?: boolean } = {}): Promise<FtpServer> {
  const vsftpd = await requireProgram('vsftpd', 'vsftpd', ['/usr/sbin']);
  if (process.getuid?.() !== 0) throw new Error('vsftpd tests need root (vsftpd switches to the ftp user)');
  const root = mkdtempSync(join(tmpdir(), 'skyferry-vsftpd-'));
  chmodSync(root, 0o755);
  // vsftpd refuses a writable chroot for anonymous logins: the login's "/" belongs to root and
  // the writable folder is /data inside it.
  const anonRoot = join(root, 'anon');
  const dir = join(anonRoot, 'data');
  const empty = join(root, 'empty');
  mkdirSync(dir, { recursive: true });
  mkdirSync(empty);
  chmodSync(anonRoot, 0o755);
  await run('chown', ['ftp:ftp', dir]);
  const port = await freePort();
  const pasvMin = await freePort();
  const cert = opts.tls ? await selfSignedCert(root) : undefined;
  const conf = [
    'listen=YES',
    'listen_ipv6=NO',
    'listen_address=127.0.0.1',
    `listen_port=${port}`,
    'background=NO',
    'anonymous_enable=YES',
    'local_enable=NO',
    `anon_root=${anonRoot}`,
    'write_enable=YES',
    'anon_upload_enable=YES',
    'anon_mkdir_write_enable=YES',
    'anon_other_write_enable=YES',
    'anon_world_readable_only=NO',
    'anon_umask=022',
    'ftp_username=ftp',
    'mdtm_write=YES',
    'utf8_filesystem=YES',
    'pasv_enable=YES',
    'pasv_address=127.0.0.1',
    // A small range above a free port; vsftpd picks within it.
    `pasv_min_port=${pasvMin}`,
    `pasv_max_port=${pasvMin + 200}`,
    `secure_chroot_dir=${empty}`,
    'seccomp_sandbox=NO',
    'isolate=NO',
    'isolate_network=NO',
    'xferlog_enable=NO',
    'dirmessage_enable=NO',
    'use_localtime=NO',
    'max_clients=0',
    'max_per_ip=0',
    'idle_session_timeout=600',
    'data_connection_timeout=300',
    `vsftpd_log_file=${root}/vsftpd.log`,
    ...(cert
      ? [
          'ssl_enable=YES',
          `rsa_cert_file=${cert.certPath}`,
          `rsa_private_key_file=${cert.keyPath}`,
          'allow_anon_ssl=YES',
          'force_anon_logins_ssl=YES',
          'force_anon_data_ssl=YES',
          'ssl_tlsv1=YES',
          'ssl_sslv2=NO',
          'ssl_sslv3=NO',
          'require_ssl_reuse=YES',
        ]
      : []),
    '',
  ].join('\n');
  const confPath = join(root, 'vsftpd.conf');
  writeFileSync(confPath, conf);
  const daemon = startDaemon(vsftpd, [confPath]);
  await waitFor(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`vsftpd exited: ${daemon.output()}`);
    return greets(port);
  }, 'vsftpd to greet');
  return {
    host: '127.0.0.1',
    port,
    username: 'anonymous',
    password: 'skyferry@example.com',
    dir,
    root: '/data',
    ...(cert ? { certPem: cert.pem, certFingerprint256: cert.fingerprint256 } : {}),
    async stop() {
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
