import { registerKind } from '../../api/registry.ts';
import { openFtp } from './ftp.ts';

export { FtpProvider, openFtp, FTP_TEMP_PREFIX, type FtpOptions } from './ftp.ts';

registerKind('ftp', (credentials, ctx) => openFtp(credentials, ctx));
