import { registerKind } from '../../api/registry.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type { WebdavOptions, WebdavProvider } from './webdav.ts';

export type { WebdavOptions, WebdavProvider, WebdavVendor } from './webdav.ts';

/** Opens a WebDAV cloud; the backend and its XML parser load on first use (see openSftp). */
export async function openWebdav(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  options: WebdavOptions = {},
): Promise<WebdavProvider> {
  return (await import('./webdav.ts')).openWebdav(credentials, ctx, options);
}

registerKind('webdav', (credentials, ctx) => openWebdav(credentials, ctx));
