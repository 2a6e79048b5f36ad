import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, Provider } from '@skyferry/providers';
import { runTransfer } from '../run.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { startBackend, type BackendFixture, type BackendName } from '../testing/backends.ts';
import { unportable } from './support.ts';

// Issue 35, finding 1: keep-both conflict copies between every pair of backend kinds that run
// here (local disk, Apache WebDAV, OpenSSH SFTP, vsftpd FTP, s3rver), local to local included. The
// sides' labels hold what Windows refuses (a path, a drive letter, a URL), the names are near the
// 255-byte limit of disks, and one copy's name is taken already on one side: every copy must be
// written to both sides under a short, portable, unique name, and the run must end in success.

const NOW = new Date(Date.UTC(2026, 10, 28, 11, 9));
// What a cloud's label might hold: an account path, a drive, a URL with a port, quotes and pipes.
const LABELS = { source: 'Laptop: C:\\Users\\me', target: 'NAS <nas:8443> "home"|*?' };
const CLEAN = { source: 'Laptop C Users me', target: 'NAS nas 8443 home' };

/**
 * s3rver keeps each object in a file named after its key and "._S3rver_metadata.json": on its
 * disk a name may have 233 bytes. Its side says so, as a backend declares its limit.
 */
const S3RVER_LIMIT = 233;
/** Names near the limit: 4 bytes short of it, in ASCII and in two-byte letters. */
const filesFor = (limit: number) => [
  'report.txt',
  `${'L'.repeat(limit - 8)}.txt`,
  `${'é'.repeat(Math.floor((limit - 7) / 2))}.md`,
  'taken.txt',
];

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

async function put(p: Provider, path: string, text: string, modTime: Date): Promise<void> {
  const body = Buffer.from(text);
  await p.put(path, Readable.from([body]), { size: body.length, modTime });
}

async function read(p: Provider, path: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await p.openRead(path)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function files(p: Provider, dir: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let pageToken: string | undefined;
  do {
    const page = await p.list(dir, { pageToken });
    out.push(...page.entries.filter((e) => e.kind === 'file'));
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

/** A fixture's provider, with s3rver's name limit declared. */
function declared(f: BackendFixture): Provider {
  if (f.name !== 's3') return f.provider;
  const features = { ...f.provider.features, nameLimit: { max: S3RVER_LIMIT, unit: 'bytes' as const } };
  return Object.create(f.provider, { features: { value: features } }) as Provider;
}

const KINDS: BackendName[] = ['local', 'webdav', 'sftp', 'ftp', 's3'];
const PAIRS: [BackendName, BackendName][] = [['local', 'local']];
for (let i = 0; i < KINDS.length; i++)
  for (let j = i + 1; j < KINDS.length; j++) PAIRS.push([KINDS[i] as BackendName, KINDS[j] as BackendName]);

describe('two-way conflict copies between every pair of backend kinds', () => {
  const started = new Map<string, BackendFixture>();
  beforeAll(async () => {
    const fixtures = await Promise.all([...KINDS, 'local' as const].map((k) => startBackend(k)));
    fixtures.forEach((f, i) => started.set(i === KINDS.length ? 'local2' : (KINDS[i] as string), f));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([...started.values()].map((f) => f.stop()));
  });

  it.each(PAIRS)(
    '%s to %s',
    async (aKind, bKind) => {
      const a = declared(started.get(aKind) as BackendFixture);
      const b = declared(started.get(bKind === aKind ? 'local2' : bKind) as BackendFixture);
      const limit = aKind === 's3' || bKind === 's3' ? S3RVER_LIMIT : 255;
      const FILES = filesFor(limit);
      const root = `/cc-${aKind}-${bKind}`;
      const state = new MemoryTwoWayStateStore();
      const sync = () =>
        runTransfer({
          source: a,
          target: b,
          mode: 'two_way',
          sourcePaths: [root],
          targetPath: root,
          twoWayState: state,
          sideNames: LABELS,
          now: NOW,
          retries: { retries: 2, minSleepMs: 10, maxSleepMs: 50 },
        });
      const t0 = new Date(Date.now() - 3_600_000);
      for (const f of FILES) await put(a, `${root}/${f}`, `base ${f.slice(0, 8)}`, t0);
      const first = await sync();
      expect(first.result.error).toBeUndefined();
      expect(first.result.failed.map((f) => `${f.item.rel}: ${f.reason} ${f.message}`)).toEqual([]);
      expect(first.result.outcome).toBe('success');

      // Both sides change every file, to different contents; the source's edits are the newer.
      const t1 = new Date(Date.now() - 600_000);
      const t2 = new Date(Date.now() - 60_000);
      for (const f of FILES) {
        await put(b, `${root}/${f}`, `target's edit of ${f.slice(0, 8)}`, t1);
        await put(a, `${root}/${f}`, `source's much longer edit of ${f.slice(0, 8)}`, t2);
      }
      // The name the copy of taken.txt would get is in use on the target side already, from either side.
      for (const side of ['source', 'target'] as const)
        await put(b, `${root}/taken (conflict 2026-11-28 from ${CLEAN[side]}).txt`, `already here ${side}`, t1);

      const second = await sync();
      expect(second.result.failed.map((f) => `${f.item.rel}: ${f.reason} ${f.message}`)).toEqual([]);
      expect(second.result.outcome).toBe('success');
      expect(second.result.summary.conflicts).toBe(FILES.length);
      const copies = (second.plan?.items ?? [])
        .filter((i) => i.action === 'conflict')
        .map((i) => i.conflict?.loserName ?? '');
      expect(copies).toHaveLength(FILES.length);

      const [onA, onB] = await Promise.all([files(a, root), files(b, root)]);
      const names = (l: Entry[]) => l.map((e) => e.name.normalize('NFC')).sort();
      expect(names(onA)).toEqual(names(onB));
      for (const f of FILES) {
        const item = (second.plan?.items ?? []).find((i) => i.action === 'conflict' && i.rel === `/${f}`);
        const c = item?.conflict;
        expect(c?.resolution, f).toBe('keep_both');
        const copy = c?.loserName ?? '';
        const loser = c?.winner === 'source' ? 'target' : 'source';
        // Short, recognisable, portable and within the disks' 255 bytes on both sides.
        expect(unportable(copy), copy).toBeNull();
        expect(bytes(copy)).toBeLessThanOrEqual(limit);
        expect(copy).toContain(` (conflict 2026-11-28 from ${CLEAN[loser]}`);
        expect(copy.endsWith(f.slice(f.lastIndexOf('.')))).toBe(true);
        expect(names(onA)).toContain(copy.normalize('NFC'));
        // The winner keeps the name on both sides, the loser's bytes are under the copy's name on both.
        const winnerText =
          c?.winner === 'source'
            ? `source's much longer edit of ${f.slice(0, 8)}`
            : `target's edit of ${f.slice(0, 8)}`;
        const loserText =
          c?.winner === 'source'
            ? `target's edit of ${f.slice(0, 8)}`
            : `source's much longer edit of ${f.slice(0, 8)}`;
        for (const p of [a, b]) {
          expect(await read(p, `${root}/${f}`), `${f} on ${p.kind}`).toBe(winnerText);
          expect(await read(p, `${root}/${copy}`), `${copy} on ${p.kind}`).toBe(loserText);
        }
      }
      // Cut to fit, the extension kept; a taken name is numbered.
      const longCopy = copies.find((n) => n.startsWith('LLL')) ?? '';
      expect(bytes(longCopy)).toBe(limit);
      expect(longCopy.endsWith(').txt')).toBe(true);
      const accentCopy = copies.find((n) => n.startsWith('é')) ?? '';
      expect(bytes(accentCopy)).toBeLessThanOrEqual(limit);
      expect(bytes(accentCopy)).toBeGreaterThan(limit - 2);
      expect(accentCopy.endsWith(').md')).toBe(true);
      expect(copies.find((n) => n.startsWith('taken'))).toMatch(/^taken \(conflict 2026-11-28 from .+ 2\)\.txt$/);
      // The already-taken names were not touched, and came across to the source.
      for (const side of ['source', 'target'] as const) {
        const n = `${root}/taken (conflict 2026-11-28 from ${CLEAN[side]}).txt`;
        expect(await read(a, n)).toBe(`already here ${side}`);
        expect(await read(b, n)).toBe(`already here ${side}`);
      }

      // Settled: the next run has nothing to do.
      const third = await sync();
      expect(third.result.outcome).toBe('success');
      expect((third.plan?.items ?? []).filter((i) => i.action !== 'skip')).toEqual([]);
    },
    120_000,
  );
});
