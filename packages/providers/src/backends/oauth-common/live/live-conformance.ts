import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openProvider } from '../../../api/registry.ts';
import type { Entry, HashType } from '../../../api/types.ts';
import { hashBuffer } from '../../../hashing.ts';
import { readAll, runConformance } from '../../../testkit/index.ts';
import { OAUTH_KINDS } from '../services.ts';
import '../../index.ts';

/**
 * Runs the shared conformance suite against a real account of an OAuth kind, when the operator
 * gives credentials (the emulator runs are what CI does; this is how an operator checks the real
 * services). Environment, for kind K (upper case, e.g. GOOGLE_DRIVE) and its service S (GOOGLE,
 * MICROSOFT, DROPBOX, BOX):
 *   SKYFERRY_LIVE_K_TOKEN          a refresh token (or an access token) for the account
 *   SKYFERRY_LIVE_S_CLIENT_ID      the OAuth client the token was issued to
 *   SKYFERRY_LIVE_S_CLIENT_SECRET  (both needed to refresh; get-token.ts prints all three)
 *   SKYFERRY_LIVE_K_SETTINGS       optional JSON of backend settings, e.g. {"drive_id":"..."}
 *   SKYFERRY_LIVE_PAGING_COUNT     files in the paging case (default 300, to spare API quotas)
 * The suite works in a fresh folder "/skyferry-conformance-<random>" and removes it at the end.
 * Run: SKYFERRY_LIVE_GOOGLE_DRIVE_TOKEN=... npm run test:live -- google_drive
 */

const MiB = 1024 * 1024;

function env(name: string): string | undefined {
  const v = process.env[name];
  return v && v.trim() ? v.trim() : undefined;
}

export function liveCredentials(kind: string): {
  credentials: Record<string, unknown>;
  settings: Record<string, unknown>;
  missing: string[];
} {
  const info = OAUTH_KINDS[kind];
  if (!info) throw new Error(`${kind} is not an OAuth kind`);
  const K = kind.toUpperCase();
  const S = info.service.toUpperCase();
  const token = env(`SKYFERRY_LIVE_${K}_TOKEN`);
  const clientId = env(`SKYFERRY_LIVE_${S}_CLIENT_ID`);
  const clientSecret = env(`SKYFERRY_LIVE_${S}_CLIENT_SECRET`);
  const missing = token ? [] : [`SKYFERRY_LIVE_${K}_TOKEN`];
  const settingsText = env(`SKYFERRY_LIVE_${K}_SETTINGS`);
  const settings = settingsText ? (JSON.parse(settingsText) as Record<string, unknown>) : {};
  // A refresh token with its client, or a bare access token (short runs).
  const credentials: Record<string, unknown> =
    clientId && clientSecret
      ? { access_token: '', refresh_token: token, expiry: 0, client_id: clientId, client_secret: clientSecret }
      : { access_token: token };
  Object.assign(credentials, settings);
  return { credentials, settings, missing };
}

export function runLiveConformance(kind: string): void {
  const { credentials, settings, missing } = liveCredentials(kind);
  if (missing.length > 0) {
    describe(`live ${kind}`, () => {
      it('has credentials', () => {
        expect.fail(`Set ${missing.join(', ')} (see packages/providers/src/backends/oauth-common/live/README.md)`);
      });
    });
    return;
  }
  if (kind === 'google_photos') {
    runLivePhotos(credentials);
    return;
  }
  if (kind === 'google_drive_shared') {
    runLiveReadOnly(kind, credentials);
    return;
  }
  const paging = Number(env('SKYFERRY_LIVE_PAGING_COUNT') ?? 300);
  runConformance(
    `${kind} (live)`,
    async () => ({
      provider: await openProvider(kind, credentials, {}),
      cleanup: async () => undefined,
      badCredentials: () => openProvider(kind, { ...settings, access_token: 'skyferry-invalid-token' }, {}),
    }),
    { pagingCount: paging, bigFileSize: 24 * MiB, streamFileSize: 12 * MiB, slowTimeoutMs: 30 * 60_000 },
  );
}

/** Read-only kinds ("Shared with me"): list, find a file, read it, check its hash. */
function runLiveReadOnly(kind: string, credentials: Record<string, unknown>): void {
  describe(`live ${kind}`, () => {
    it('lists, reads a file and checks its reported hash', async () => {
      const p = await openProvider(kind, credentials, {});
      const queue = ['/'];
      let file: Entry | undefined;
      for (let seen = 0; queue.length && !file && seen < 50; seen++) {
        const page = await p.list(queue.shift()!);
        file = page.entries.find((e) => e.kind === 'file' && e.size > 0 && e.size < 50 * MiB);
        queue.push(...page.entries.filter((e) => e.kind === 'dir').map((e) => e.path));
      }
      expect(file, 'something shared with this account to read').toBeDefined();
      const data = await readAll(await p.openRead(file!.path));
      expect(data.length).toBe(file!.size);
      for (const [type, value] of Object.entries(file!.hashes ?? {}) as Array<[HashType, string]>) {
        expect(await hashBuffer(data, type)).toBe(value);
      }
      const err = await p.mkdir('/skyferry-should-not-exist').catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('permission');
    }, 300_000);
  });
}

/** A 1x1 PNG, so Google Photos accepts the upload. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a7e90000000049454e44ae426082',
  'hex',
);

/**
 * Google Photos has no delete in its API: the suite (which runs against the emulator with the
 * API's capability flags) would leave hundreds of test items in a real library. This uploads one
 * tiny picture into the album "Skyferry live check" and reads it back. It stays in the library
 * (remove it by hand in Google Photos).
 */
function runLivePhotos(credentials: Record<string, unknown>): void {
  describe('live google_photos', () => {
    it('uploads a picture into an album, lists it and reads it back', async () => {
      const p = await openProvider('google_photos', credentials, {});
      const name = `skyferry-${Date.now()}.png`;
      const e = await p.put(`/Skyferry live check/${name}`, Readable.from([PNG]), { size: PNG.length });
      expect(e.name).toBe(name);
      expect((await p.list('/Skyferry live check')).entries.map((x) => x.name)).toContain(name);
      const back = await readAll(await p.openRead(`/Skyferry live check/${name}`));
      expect(back.length).toBeGreaterThan(0);
    }, 120_000);
  });
}
