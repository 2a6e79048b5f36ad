import { ALL_CLOUD_FLAGS } from '@skyferry/contract';
import type { CloudRecord } from '../clouds.ts';

/** A connected cloud of user u1 as the clouds service answers it (tests of the runner). */
export function cloudRecord(id: string, kind: string): CloudRecord {
  return {
    id,
    cloudId: id,
    kind,
    cloudAccount: `${id}@example.com`,
    alias: '',
    space: 0,
    usedSpace: 0,
    status: 'authorized',
    sort: 0,
    flags: ALL_CLOUD_FLAGS,
    owner: { userId: 'u1' },
    createdAt: 0,
    updatedAt: 0,
    lastUsedAt: 0,
  };
}

/** Waits until `test` holds, looking every few milliseconds; fails naming `what` after `timeoutMs`. */
export async function until(what: string, test: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
