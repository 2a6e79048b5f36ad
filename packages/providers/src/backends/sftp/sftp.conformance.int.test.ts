import { startRcloneServe, startSshd } from '@skyferry/testing';
import type { ProviderContext } from '../../api/registry.ts';
import { runConformance } from '../../testkit/index.ts';
import { openedOnFirstCall } from '../webdav/deferred.ts';
import { openSftp } from './sftp.ts';

function memoryContext(): ProviderContext {
  const ctx: ProviderContext = {
    state: {},
    async saveState(s) {
      ctx.state = s;
    },
  };
  return ctx;
}

runConformance('sftp on OpenSSH sshd (key login)', async () => {
  const server = await startSshd();
  const ctx = memoryContext();
  const creds = { host: server.host, port: server.port, username: server.username, private_key: server.privateKey };
  return {
    provider: await openSftp(creds, ctx),
    cleanup: () => server.stop(),
    // The server's other key, with a wrong passphrase: refused.
    badCredentials: async () =>
      openedOnFirstCall(() => openSftp({ ...creds, private_key: server.encryptedKey, passphrase: 'wrong' }, ctx)),
  };
});

runConformance('sftp on rclone serve sftp (password login)', async () => {
  const server = await startRcloneServe('sftp');
  const ctx = memoryContext();
  const creds = { host: server.host, port: server.port, username: server.username, password: server.password };
  return {
    provider: await openSftp(creds, ctx),
    cleanup: () => server.stop(),
    badCredentials: async () => openedOnFirstCall(() => openSftp({ ...creds, password: 'wrong password' }, ctx)),
  };
});
