import { registerKind } from '../../api/registry.ts';
import { openSftp } from './sftp.ts';

export { SftpProvider, openSftp, SFTP_TEMP_PREFIX, type SftpOptions } from './sftp.ts';
export { fingerprint as sftpHostKeyFingerprint } from './connection.ts';

registerKind('sftp', (credentials, ctx) => openSftp(credentials, ctx));
