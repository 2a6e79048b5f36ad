import { registerKind } from '../../api/registry.ts';
import { S3_KINDS } from './kinds.ts';
import { openS3 } from './s3.ts';

export { S3_KINDS, type S3Kind } from './kinds.ts';
export { s3Error } from './errors.ts';
// openS3 takes the endpoint options that are not credentials (part sizes, concurrency, and the
// workarounds some servers need, such as s3rver's copySourceEncoding 'uri' and markAllFolders).
export { S3Provider, S3_MIN_PART, openS3, s3ConfigFrom } from './s3.ts';
export type { S3Config, S3Options, ChecksumMode } from './s3.ts';

for (const kind of S3_KINDS) {
  registerKind(kind, (credentials, ctx) => openS3(kind, credentials, ctx));
}
