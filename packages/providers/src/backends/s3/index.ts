import { registerKind } from '../../api/registry.ts';
import { S3_KINDS, openS3 } from './s3.ts';

export {
  S3Provider,
  S3_KINDS,
  S3_MIN_PART,
  openS3,
  s3ConfigFrom,
  type S3Config,
  type S3Kind,
  type S3Options,
  type ChecksumMode,
} from './s3.ts';
export { s3Error } from './errors.ts';

for (const kind of S3_KINDS) registerKind(kind, (credentials, ctx) => openS3(kind, credentials, ctx));
