import { registerKind } from '../../api/registry.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type { SftpOptions, SftpProvider } from './sftp.ts';

export type { SftpOptions, SftpProvider } from './sftp.ts';

/**
 * Opens an SFTP cloud. The backend and its SSH library load on first use, so a process that never
 * reaches an SFTP server (a command line copying between local folders) does not pay for them.
 */
export async function openSftp(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  opts: SftpOptions = {},
): Promise<SftpProvider> {
  return (await import('./sftp.ts')).openSftp(credentials, ctx, opts);
}

registerKind('sftp', (credentials, ctx) => openSftp(credentials, ctx));
