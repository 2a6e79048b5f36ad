import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashPool } from './hash-pool.ts';

describe('the hashing threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-hash-pool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.runIf(hashPool() !== null)(
    'refuse a device put where a file was listed before reading it (a device can be read without end)',
    async () => {
      const pool = hashPool();
      writeFileSync(join(dir, 'plain.bin'), 'abc');
      symlinkSync('/dev/zero', join(dir, 'zeros.bin'));
      // A scope that allows the device's real path: only the kind of file refuses it.
      const scope = { root: '/', shut: [] };
      await expect(pool?.hash(scope, join(dir, 'zeros.bin'), 'md5')).rejects.toMatchObject({ code: 'ENOTREG' });
      await expect(pool?.hash(scope, join(dir, 'plain.bin'), 'md5')).resolves.toBe('900150983cd24fb0d6963f7d28e17f72');
    },
    10_000,
  );
});
