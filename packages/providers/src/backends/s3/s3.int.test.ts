import { startS3rver } from '@skyferry/testing';
import { runConformance } from '../../testkit/conformance.ts';
import { S3_MIN_PART, openS3 } from './s3.ts';

runConformance(
  's3_compatible on s3rver',
  async () => {
    const server = await startS3rver({ buckets: ['conformance'] });
    const credentials = {
      bucket: 'conformance',
      access_key_id: server.accessKeyId,
      secret_access_key: server.secretAccessKey,
      endpoint: server.endpoint,
      region: server.region,
      path_style: true,
      request_checksum_calculation: 'WHEN_REQUIRED',
    };
    // s3rver decodes x-amz-copy-source with decodeURI and finds folders only one level down.
    const quirks = { copySourceEncoding: 'uri', markAllFolders: true, chunkSize: S3_MIN_PART } as const;
    const provider = await openS3('s3_compatible', credentials, {}, quirks);
    return {
      provider,
      // s3rver does not check SigV4 signatures, but it does refuse unknown access keys.
      badCredentials: () => openS3('s3_compatible', { ...credentials, access_key_id: 'UNKNOWN-KEY' }, {}, quirks),
      cleanup: () => server.stop(),
    };
  },
  // s3rver streams each PUT straight into the object's file, so simultaneous PUTs of one key mix.
  { streamFileSize: 16 * 1024 * 1024, atomicOverwrite: false },
);
