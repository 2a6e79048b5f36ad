import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startApacheWebdav,
  startFtpSrv,
  startRcloneServe,
  startSshd,
  startVsftpd,
  type FtpServer,
  type WebdavServer,
} from '@skyferry/testing';
import type { BenchTarget, RunningTarget } from './lib/targets.ts';

/** rclone takes passwords on the command line only in its obscured form. */
function obscure(password: string): string {
  return execFileSync('rclone', ['obscure', password]).toString().trim();
}

function webdavTarget(name: string, start: () => Promise<WebdavServer>): BenchTarget {
  return {
    name,
    async start(): Promise<RunningTarget> {
      const server = await start();
      return {
        kind: 'webdav',
        credentials: { url: server.url, username: server.username, password: server.password },
        dir: '/bench',
        rclone: {
          remote: ':webdav:bench',
          flags: [
            `--webdav-url=${server.url}`,
            `--webdav-user=${server.username}`,
            `--webdav-pass=${obscure(server.password)}`,
          ],
        },
        stop: () => server.stop(),
      };
    },
  };
}

function ftpTarget(name: string, start: () => Promise<FtpServer>, secure: boolean): BenchTarget {
  return {
    name,
    async start(): Promise<RunningTarget> {
      const server = await start();
      const base = server.root === '/' ? '' : server.root;
      return {
        kind: 'ftp',
        credentials: {
          host: server.host,
          port: server.port,
          username: server.username,
          password: server.password,
          root: server.root,
          secure,
          ...(server.certFingerprint256 ? { tls_fingerprint: server.certFingerprint256 } : {}),
        },
        dir: '/bench',
        rclone: {
          remote: `:ftp:${base}/bench`,
          flags: [
            `--ftp-host=${server.host}`,
            `--ftp-port=${server.port}`,
            `--ftp-user=${server.username}`,
            `--ftp-pass=${obscure(server.password)}`,
            // rclone's TLS 1.3 and vsftpd's do not agree (rclone's own workaround flag).
            ...(secure ? ['--ftp-explicit-tls', '--ftp-no-check-certificate', '--ftp-disable-tls13'] : []),
          ],
        },
        stop: () => server.stop(),
      };
    },
  };
}

/** WebDAV, SFTP and FTP rows of the providers benchmark, each against a real server on 127.0.0.1. */
export const PROTOCOL_TARGETS: BenchTarget[] = [
  webdavTarget('webdav (Apache mod_dav)', startApacheWebdav),
  webdavTarget('webdav (rclone serve webdav)', () => startRcloneServe('webdav')),
  {
    name: 'sftp (OpenSSH sshd)',
    async start(): Promise<RunningTarget> {
      const server = await startSshd();
      const keyDir = mkdtempSync(join(tmpdir(), 'skyferry-bench-key-'));
      const keyFile = join(keyDir, 'id');
      writeFileSync(keyFile, server.privateKey, { mode: 0o600 });
      return {
        kind: 'sftp',
        credentials: {
          host: server.host,
          port: server.port,
          username: server.username,
          private_key: server.privateKey,
        },
        dir: '/bench',
        rclone: {
          remote: `:sftp:${server.dir}/bench`,
          flags: [
            `--sftp-host=${server.host}`,
            `--sftp-port=${server.port}`,
            `--sftp-user=${server.username}`,
            `--sftp-key-file=${keyFile}`,
            // The server allows SFTP only: no remote md5sum.
            '--sftp-disable-hashcheck',
          ],
        },
        stop: async () => {
          await server.stop();
          rmSync(keyDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'sftp (rclone serve sftp)',
    async start(): Promise<RunningTarget> {
      const server = await startRcloneServe('sftp');
      return {
        kind: 'sftp',
        credentials: { host: server.host, port: server.port, username: server.username, password: server.password },
        dir: '/bench',
        rclone: {
          remote: ':sftp:bench',
          flags: [
            `--sftp-host=${server.host}`,
            `--sftp-port=${server.port}`,
            `--sftp-user=${server.username}`,
            `--sftp-pass=${obscure(server.password)}`,
          ],
        },
        stop: () => server.stop(),
      };
    },
  },
  ftpTarget('ftp (vsftpd)', () => startVsftpd(), false),
  ftpTarget('ftps (vsftpd, explicit TLS)', () => startVsftpd({ tls: true }), true),
  ftpTarget('ftp (ftp-srv)', () => startFtpSrv(), false),
];
