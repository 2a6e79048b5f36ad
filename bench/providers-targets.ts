import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3rver } from '@skyferry/testing';
import { PROTOCOL_TARGETS } from './protocol-targets.ts';
import type { BenchTarget } from './lib/targets.ts';

export type { BenchTarget, RunningTarget } from './lib/targets.ts';

/** Add WebDAV, SFTP and FTP rows here (start the server with the launcher from @skyferry/testing). */
export const BENCH_TARGETS: BenchTarget[] = [
  {
    name: 'local',
    async start() {
      const base = mkdtempSync(join(tmpdir(), 'skyferry-bench-local-'));
      mkdirSync(join(base, 'bench'));
      return {
        kind: 'local',
        credentials: { path: base },
        localRoots: [base],
        dir: '/bench',
        rclone: { remote: join(base, 'bench'), flags: [] },
        stop: async () => rmSync(base, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 's3 (s3rver)',
    async start() {
      const server = await startS3rver({ buckets: ['bench'] });
      return {
        kind: 's3_compatible',
        credentials: {
          bucket: 'bench',
          access_key_id: server.accessKeyId,
          secret_access_key: server.secretAccessKey,
          endpoint: server.endpoint,
          region: server.region,
          path_style: true,
          request_checksum_calculation: 'WHEN_REQUIRED',
        },
        dir: '/bench',
        rclone: {
          remote: ':s3:bench/bench',
          flags: [
            '--s3-provider=Other',
            `--s3-endpoint=${server.endpoint}`,
            `--s3-access-key-id=${server.accessKeyId}`,
            `--s3-secret-access-key=${server.secretAccessKey}`,
            `--s3-region=${server.region}`,
            '--s3-force-path-style=true',
          ],
        },
        stop: () => server.stop(),
      };
    },
  },
  ...PROTOCOL_TARGETS,
];
