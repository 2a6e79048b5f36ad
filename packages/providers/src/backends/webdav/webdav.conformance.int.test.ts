import { startApacheWebdav, startRcloneServe, type WebdavServer } from '@skyferry/testing';
import { runConformance } from '../../testkit/index.ts';
import { openedOnFirstCall } from './deferred.ts';
import { openWebdav } from './webdav.ts';

function fixture(start: () => Promise<WebdavServer>) {
  return async () => {
    const server = await start();
    const creds = { url: server.url, username: server.username, password: server.password };
    return {
      provider: await openWebdav(creds),
      cleanup: () => server.stop(),
      badCredentials: async () => openedOnFirstCall(() => openWebdav({ ...creds, password: 'wrong password' })),
    };
  };
}

runConformance('webdav on Apache mod_dav', fixture(startApacheWebdav));
// rclone serve webdav writes a PUT's body as the whole file whatever its Content-Range.
runConformance(
  'webdav on rclone serve webdav',
  fixture(() => startRcloneServe('webdav')),
  { capabilities: { chunkWriter: false } },
);
