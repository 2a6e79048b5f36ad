import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocal, openSftp, type Provider } from '@skyferry/providers';
import { startRcloneServe, startSshd, type RcloneServer, type SshServer } from '@skyferry/testing';
import type { ItemEvent } from './executor.ts';
import { runTransfer } from './run.ts';

// Large files to SFTP servers: `rclone serve sftp` on its defaults takes writes only in order (a
// write beyond what it has fails with "Illegal seek" after a second), so the run sends them through
// one in-order stream; OpenSSH keeps the parallel chunk writer. The chunk threshold is lowered from
// 64 MiB to 4 MiB (and chunks to 1 MiB) so that a 6 MiB file takes the same path.

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let base: string;
let source: Provider;
const data = randomBytes(6 * MiB + 5);

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'skyferry-sftp-seq-'));
  writeFileSync(join(base, 'big.bin'), data);
  source = await openLocal({ path: base }, { localRoots: [base] });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function copyBig(target: Provider): Promise<{ events: ItemEvent[]; outcome: string; failed: string[] }> {
  const events: ItemEvent[] = [];
  const { result } = await runTransfer({
    source,
    target,
    mode: 'migrate',
    sourcePaths: ['/big.bin'],
    targetPath: '/up',
    chunkThreshold: 4 * MiB,
    retries: { retries: 2, minSleepMs: 50, maxSleepMs: 200 },
    finalRetries: 0,
    onItem: (e) => events.push(e),
  });
  return { events, outcome: result.outcome, failed: result.failed.map((f) => `${f.reason}: ${f.message}`) };
}

describe('a large file to rclone serve sftp on its defaults', () => {
  let server: RcloneServer;
  beforeAll(async () => {
    server = await startRcloneServe('sftp', { vfsCacheMode: 'off' });
  });
  afterAll(async () => server?.stop());

  it('arrives whole, written in order', async () => {
    const target = await openSftp(
      { host: server.host, port: server.port, username: server.username, password: server.password },
      {},
      { chunkSize: MiB, concurrency: 4 },
    );
    try {
      const r = await copyBig(target);
      expect(r.failed).toEqual([]);
      expect(r.outcome).toBe('success');
      expect(r.events.filter((e) => e.type === 'done').map((e) => e.chunked)).toEqual([false]);
      expect(sha(readFileSync(join(server.dir, 'up', 'big.bin')))).toBe(sha(data));
    } finally {
      await target.close?.();
    }
  }, 60_000);
});

describe('a large file to OpenSSH', () => {
  let server: SshServer;
  beforeAll(async () => {
    server = await startSshd();
  });
  afterAll(async () => server?.stop());

  it('keeps the parallel chunk writer', async () => {
    const target = await openSftp(
      { host: server.host, port: server.port, username: server.username, private_key: server.privateKey },
      {},
      { chunkSize: MiB, concurrency: 4 },
    );
    try {
      const r = await copyBig(target);
      expect(r.failed).toEqual([]);
      expect(r.events.filter((e) => e.type === 'done').map((e) => e.chunked)).toEqual([true]);
      expect(sha(readFileSync(join(server.dir, 'up', 'big.bin')))).toBe(sha(data));
    } finally {
      await target.close?.();
    }
  }, 60_000);
});
