import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3rver } from '@skyferry/testing';
import { PROTOCOL_TARGETS } from './protocol-targets.ts';

/**
 * One row of the providers benchmark: a server on 127.0.0.1 (or a folder) reached both by a
 * Skyferry backend and by `rclone` configured on the command line, so both copy to the same place.
 */
export interface BenchTarget {
  name: string;
  start(): Promise<RunningTarget>;
}

export interface RunningTarget {
  /** Skyferry cloud kind and its form credentials, as `openProvider` takes them. */
  kind: string;
  credentials: Record<string, unknown>;
  /** Local roots for the local kind. */
  localRoots?: string[];
  /** Folder (cloud path) the benchmark writes into; created by the benchmark. */
  dir: string;
  /** The same folder for rclone: an on-the-fly remote (":s3:bucket/dir") or a local path, plus flags. */
  rclone: { remote: string; flags: string[]; env?: Record<string, string> };
  stop(): Promise<void>;
}

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
