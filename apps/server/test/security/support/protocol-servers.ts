import {
  startApacheWebdav,
  startFtpSrv,
  startS3rver,
  startSshd,
  type FtpServer,
  type S3rverServer,
  type SshServer,
  type WebdavServer,
} from '@skyferry/testing';

/** The cloud kinds a user reaches by an address they give (FTPS is the FTP kind with `secure`). */
export type AddressKind = 'sftp' | 'ftp' | 'ftps' | 'webdav' | 's3';
export const ADDRESS_KINDS: readonly AddressKind[] = ['sftp', 'ftp', 'ftps', 'webdav', 's3'];

/** A POST /api/clouds body. */
export interface ConnectBody {
  cloud_name: string;
  credentials: Record<string, unknown>;
}

export interface ProtocolServers {
  ssh: SshServer;
  ftp: FtpServer;
  ftps: FtpServer;
  dav: WebdavServer;
  s3: S3rverServer;
  /** Where each kind's real server listens. */
  behind: Record<AddressKind, { host: string; port: number }>;
  /** The body that connects `kind` with the right login, its server named `host` (an address or a name) at `port`. */
  connect(kind: AddressKind, host: string, port: number): ConnectBody;
  stop(): Promise<void>;
}

/**
 * One real server of each kind reached by address, on 127.0.0.1: OpenSSH (SFTP), ftp-srv (FTP,
 * and FTPS with a pinned self-signed certificate), Apache mod_dav (WebDAV) and s3rver (S3, bucket
 * `bucket`).
 */
export async function startProtocolServers(bucket = 'b'): Promise<ProtocolServers> {
  const [ssh, ftp, ftps, dav, s3] = await Promise.all([
    startSshd(),
    startFtpSrv(),
    startFtpSrv({ tls: true }),
    startApacheWebdav(),
    startS3rver({ buckets: [bucket] }),
  ]);
  const url = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const login = (s: FtpServer) => ({ username: s.username, password: s.password });
  return {
    ssh,
    ftp,
    ftps,
    dav,
    s3,
    behind: {
      sftp: { host: ssh.host, port: ssh.port },
      ftp: { host: ftp.host, port: ftp.port },
      ftps: { host: ftps.host, port: ftps.port },
      webdav: { host: '127.0.0.1', port: Number(new URL(dav.url).port) },
      s3: { host: '127.0.0.1', port: s3.port },
    },
    connect(kind, host, port) {
      switch (kind) {
        case 'sftp':
          return {
            cloud_name: 'sftp',
            credentials: { host, port, username: ssh.username, private_key: ssh.privateKey },
          };
        case 'ftp':
          return { cloud_name: 'ftp', credentials: { host, port, ...login(ftp) } };
        case 'ftps':
          return {
            cloud_name: 'ftp',
            credentials: { host, port, ...login(ftps), secure: true, tls_fingerprint: ftps.certFingerprint256 },
          };
        case 'webdav':
          return {
            cloud_name: 'webdav',
            credentials: { url: `${url(host, port)}/`, username: dav.username, password: dav.password },
          };
        case 's3':
          return {
            cloud_name: 's3_compatible',
            credentials: {
              endpoint: url(host, port),
              bucket,
              access_key_id: s3.accessKeyId,
              secret_access_key: s3.secretAccessKey,
              region: s3.region,
              path_style: true,
            },
          };
      }
    },
    async stop() {
      await Promise.all([ssh.stop(), ftp.stop(), ftps.stop(), dav.stop(), s3.stop()]);
    },
  };
}
