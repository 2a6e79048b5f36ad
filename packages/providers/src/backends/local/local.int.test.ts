import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runConformance } from '../../testkit/conformance.ts';
import { openLocal } from './local.ts';

runConformance('local folder', async () => {
  const base = mkdtempSync(join(tmpdir(), 'skyferry-local-conf-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  // A link inside the root that leads out of it: reading or writing through it must be refused.
  symlinkSync(outside, join(root, 'escape'));
  const provider = await openLocal({ path: root }, { localRoots: [root] }, { chunkSize: 8 * 1024 * 1024 });
  return {
    provider,
    forbiddenPath: '/escape/secret.txt',
    cleanup: async () => rmSync(base, { recursive: true, force: true }),
  };
});
