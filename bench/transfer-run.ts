/**
 * One Skyferry transfer in its own process (a child of bench/transfer.ts, so its peak memory is
 * its own): opens the two clouds, plans and runs a migration with default engine settings, prints
 * one JSON line { ms, planMs, cpuMs, outcome, files, bytes, failed } where ms covers planning and
 * copying (not Node's start-up or module loading), planMs the planning alone and cpuMs the CPU time
 * of the process (all threads) over the same span.
 *
 *   node bench/transfer-run.ts '<json spec>'
 */
import { openProvider, openS3 } from '@skyferry/providers';
import type { Provider } from '@skyferry/providers';
import { executePlan, planTransfer } from '@skyferry/engine';

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
  smallFileTransfers?: number;
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
const cpuStart = process.cpuUsage();
const plan = await planTransfer({
  source,
  target,
  mode: 'migrate',
  sourcePaths: [spec.sourcePath],
  targetPath: spec.targetPath,
  sameNamePolicy: 'overwrite',
});
const planned = performance.now();
const result = await executePlan(plan, {
  source,
  target,
  ...(spec.transfers ? { transfers: spec.transfers } : {}),
  ...(spec.smallFileTransfers ? { smallFileTransfers: spec.smallFileTransfers } : {}),
  ...(spec.chunkThreshold ? { chunkThreshold: spec.chunkThreshold } : {}),
});
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuStart);
await Promise.all([source.close?.(), target.close?.()]);
process.stdout.write(
  JSON.stringify({
    ms: Math.round(ms),
    planMs: Math.round(planned - started),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    outcome: result.outcome,
    files: result.successCount,
    bytes: result.transferredBytes,
    failed: result.failed.slice(0, 3).map((f) => `${f.item.rel}: ${f.reason} ${f.message}`),
  }) + '\n',
);
process.exit(result.outcome === 'success' ? 0 : 1);
