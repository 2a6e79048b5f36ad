import { startFtpSrv, startVsftpd, type FtpServer } from '@skyferry/testing';
import { runConformance } from '../../testkit/index.ts';
import { openedOnFirstCall } from '../webdav/deferred.ts';
import { openFtp } from './ftp.ts';

function fixture(start: () => Promise<FtpServer>, secure: boolean) {
  return async () => {
    const server = await start();
    const creds = {
      host: server.host,
      port: server.port,
      username: server.username,
      password: server.password,
      root: server.root,
      secure,
      ...(server.certFingerprint256 ? { tls_fingerprint: server.certFingerprint256 } : {}),
    };
    return {
      provider: await openFtp(creds),
      cleanup: () => server.stop(),
      // vsftpd here is anonymous-only and ftp-srv knows one user: any other login is refused.
      badCredentials: async () =>
        openedOnFirstCall(() => openFtp({ ...creds, username: 'nobody', password: 'wrong password' })),
    };
  };
}

runConformance(
  'ftp on vsftpd (LIST, MDTM times)',
  fixture(() => startVsftpd(), false),
);
runConformance(
  'ftps (explicit TLS, pinned certificate) on vsftpd',
  fixture(() => startVsftpd({ tls: true }), true),
);
runConformance(
  'ftp on ftp-srv',
  fixture(() => startFtpSrv(), false),
);
