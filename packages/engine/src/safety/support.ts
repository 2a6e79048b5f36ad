import { afterAll, beforeAll } from 'vitest';
import { runTransfer, type RunRequest } from '../run.ts';
import { startBackend, type BackendFixture, type BackendName } from '../testing/backends.ts';
import type { TransferPlan } from '../types.ts';

/** The two sides of the safety tests: real backends started before a describe block and stopped after it. */
export interface Sides {
  readonly a: BackendFixture;
  readonly b: BackendFixture;
  /** Plans and runs `mode` between `/<root>` on both sides (conflict names dated 2026-11-22 10:30, sides "A" and "B"). */
  run(mode: RunRequest['mode'], root: string, extra?: Partial<RunRequest>): ReturnType<typeof runTransfer>;
}

export function useSides(aName: BackendName, bName: BackendName): Sides {
  let a: BackendFixture | undefined;
  let b: BackendFixture | undefined;
  beforeAll(async () => {
    [a, b] = await Promise.all([startBackend(aName), startBackend(bName)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });
  const sides: Sides = {
    get a() {
      return a as BackendFixture;
    },
    get b() {
      return b as BackendFixture;
    },
    run: (mode, root, extra = {}) =>
      runTransfer({
        source: sides.a.provider,
        target: sides.b.provider,
        mode,
        sourcePaths: [`/${root}`],
        targetPath: `/${root}`,
        now: new Date(Date.UTC(2026, 10, 22, 10, 30)),
        sideNames: { source: 'A', target: 'B' },
        retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
        ...extra,
      }),
  };
  return sides;
}

/** A plan's actions but skips and folder creations, as "action side rel reason", sorted. */
export function actions(plan: TransferPlan | undefined): string[] {
  return (plan?.items ?? [])
    .filter((i) => i.action !== 'skip' && i.action !== 'mkdir')
    .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
    .sort();
}

/** Why a name would be refused by a Windows, macOS or Linux disk (null: it would not). */
export function unportable(name: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[/\\:*?"<>|\u0000-\u001f\u007f]/.test(name)) return 'character';
  if (/[. ]$/.test(name)) return 'trailing dot or space';
  if (/^(con|prn|aux|nul|com\d|lpt\d)$/i.test((name.split('.')[0] ?? '').trimEnd())) return 'reserved';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'longer than 255 bytes';
  return null;
}
