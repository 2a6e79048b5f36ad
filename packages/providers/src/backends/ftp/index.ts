import { registerKind } from '../../api/registry.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type { FtpOptions, FtpProvider } from './ftp.ts';

export type { FtpOptions, FtpProvider } from './ftp.ts';

/** Opens an FTP cloud; the backend and its FTP library load on first use (see openSftp). */
export async function openFtp(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  opts: FtpOptions = {},
): Promise<FtpProvider> {
  return (await import('./ftp.ts')).openFtp(credentials, ctx, opts);
}

registerKind('ftp', (credentials, ctx) => openFtp(credentials, ctx));
