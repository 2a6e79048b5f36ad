import { registerKind } from '../../api/registry.ts';
import { S3_KINDS } from './kinds.ts';

export { S3_KINDS, type S3Kind } from './kinds.ts';
export { s3Error } from './errors.ts';
export type { S3Config, S3Options, ChecksumMode, S3Provider } from './s3.ts';

// The AWS SDK weighs ~30 MB of memory: it is loaded when the first S3 account is opened.
for (const kind of S3_KINDS) {
  registerKind(kind, async (credentials, ctx) => (await import('./s3.ts')).openS3(kind, credentials, ctx));
}
