/**
 * One Skyferry transfer in its own process (a child of bench/transfer.ts, so its peak memory is
 * its own): opens the two clouds, plans and runs a migration with default engine settings, prints
 * one JSON line { ms, outcome, files, bytes, failed } where ms covers planning and copying (not
 * Node's start-up or module loading).
 *
 *   node bench/transfer-run.ts '<json spec>'
 */
import { openProvider } from '@skyferry/providers';
import type { Provider } from '@skyferry/providers';
import { runTransfer } from '@skyferry/engine';
// s3rver needs the S3 backend's workaround options, which only openS3 takes.
import { openS3 } from '../packages/providers/src/backends/s3/s3.ts';

export interface EndpointSpec {
  kind: 'local' | 'webdav' | 'sftp' | 's3rver';
  credentials: Record<string, unknown>;
  localRoots?: string[];
  /**
   * s3rver only: write a marker object for every folder (its listings miss deeper folders without
   * them). Needed to read nested folders back, not to copy into an empty bucket; real S3 never needs it.
   */
  markAllFolders?: boolean;
}

export interface RunSpec {
  source: EndpointSpec;
  target: EndpointSpec;
  sourcePath: string;
  targetPath: string;
  /** Engine options to try (defaults when absent). */
  transfers?: number;
  chunkThreshold?: number;
}

async function open(e: EndpointSpec): Promise<Provider> {
  if (e.kind === 's3rver') {
    return openS3(
      's3_compatible',
      e.credentials,
      {},
      { copySourceEncoding: 'uri', markAllFolders: e.markAllFolders ?? false },
    );
  }
  return openProvider(e.kind, e.credentials, { localRoots: e.localRoots });
}

const spec = JSON.parse(process.argv[2] ?? '{}') as RunSpec;
const [source, target] = await Promise.all([open(spec.source), open(spec.target)]);
const started = performance.now();
const { result } = await runTransfer({
  source,
  target,
  mode: 'migrate',
  sourcePaths: [spec.sourcePath],
  targetPath: spec.targetPath,
  sameNamePolicy: 'overwrite',
  ...(spec.transfers ? { transfers: spec.transfers } : {}),
  ...(spec.chunkThreshold ? { chunkThreshold: spec.chunkThreshold } : {}),
});
const ms = performance.now() - started;
await Promise.all([source.close?.(), target.close?.()]);
process.stdout.write(
  JSON.stringify({
    ms: Math.round(ms),
    outcome: result.outcome,
    files: result.successCount,
    bytes: result.transferredBytes,
    failed: result.failed.slice(0, 3).map((f) => `${f.item.rel}: ${f.reason} ${f.message}`),
  }) + '\n',
);
process.exit(result.outcome === 'success' ? 0 : 1);
