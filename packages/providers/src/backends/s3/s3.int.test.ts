import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { startS3rver, type S3rverServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, patternBytes, readAll, runConformance } from '../../testkit/conformance.ts';
import { BufferRing } from '../../recycle.ts';
import { S3_MIN_PART, openS3, type S3Provider } from './s3.ts';

runConformance(
  's3_compatible on s3rver',
  async () => {
    const server = await startS3rver({ buckets: ['conformance'] });
    const credentials = {
      bucket: 'conformance',
      access_key_id: server.accessKeyId,
      secret_access_key: server.secretAccessKey,
      endpoint: server.endpoint,
      region: server.region,
      path_style: true,
      request_checksum_calculation: 'WHEN_REQUIRED',
    };
    // s3rver decodes x-amz-copy-source with decodeURI and finds folders only one level down.
    // It also keeps the bytes of an interrupted single PUT, so known sizes go multipart here too
    // (the streamed single PUT is checked separately below).
    const quirks = {
      copySourceEncoding: 'uri',
      markAllFolders: true,
      chunkSize: S3_MIN_PART,
      uploadCutoff: S3_MIN_PART,
    } as const;
    const provider = await openS3('s3_compatible', credentials, {}, quirks);
    return {
      provider,
      // s3rver does not check SigV4 signatures, but it does refuse unknown access keys.
      badCredentials: () => openS3('s3_compatible', { ...credentials, access_key_id: 'UNKNOWN-KEY' }, {}, quirks),
      cleanup: () => server.stop(),
    };
  },
  // s3rver streams each PUT straight into the object's file, so simultaneous PUTs of one key mix.
  { streamFileSize: 16 * 1024 * 1024, atomicOverwrite: false },
);

describe('S3 streamed single PUT (known size up to the upload cutoff) on s3rver', () => {
  let server: S3rverServer;
  let provider: S3Provider;
  /** A provider on the 'streamed' bucket (each one trusts MD5 hints afresh). */
  const another = () =>
    openS3('s3_compatible', {
      bucket: 'streamed',
      access_key_id: server.accessKeyId,
      secret_access_key: server.secretAccessKey,
      endpoint: server.endpoint,
    });
  /** Runs `use` with a provider of its own, closed afterwards. */
  const withAnother = async (use: (fresh: S3Provider) => Promise<void>) => {
    const fresh = await another();
    try {
      await use(fresh);
    } finally {
      await fresh.close();
    }
  };
  beforeAll(async () => {
    server = await startS3rver({ buckets: ['streamed', 'usage'] });
    provider = await another();
  });
  afterAll(async () => {
    await provider?.close();
    await server?.stop();
  });

  it('sends the stream as one PUT, checks its MD5 against the ETag and keeps the mtime', async () => {
    const data = patternBytes(12 * 1024 * 1024, 77);
    const progress: number[] = [];
    const modTime = new Date('2021-06-07T08:09:10.000Z');
    const e = await provider.put(
      '/s/one.bin',
      Readable.from(chunks(data)),
      { size: data.length, modTime },
      {
        onProgress: (n) => progress.push(n),
      },
    );
    const md5 = createHash('md5').update(data).digest('hex');
    expect(e.hashes?.md5).toBe(md5);
    expect(progress[progress.length - 1]).toBe(data.length);
    const st = await provider.stat('/s/one.bin');
    expect(st).toMatchObject({ size: data.length, hashes: { md5 } });
    expect(st.modTime?.getTime()).toBe(modTime.getTime());
    expect((await readAll(await provider.openRead('/s/one.bin'))).equals(data)).toBe(true);
  });

  it("lists a large object's ETag as an MD5 hint, lets the service check a hint (Content-MD5), and learns from a wrong one", async () => {
    const data = patternBytes(8 * 1024 * 1024, 31);
    const md5 = createHash('md5').update(data).digest('hex');
    await provider.put('/hint/src.bin', Readable.from(chunks(data)), { size: data.length });
    // s3_compatible: a dashless ETag of 5 MiB or more may be a multipart one, so only a hint.
    const listed = (await provider.list('/hint')).entries.find((e) => e.name === 'src.bin');
    expect(listed).toMatchObject({ size: data.length, md5Hint: md5 });
    expect(listed?.hashes).toBeUndefined();

    const right = await provider.put('/hint/right.bin', Readable.from(chunks(data)), {
      size: data.length,
      md5Hint: md5,
    });
    expect(right.hashes?.md5).toBe(md5);

    // A wrong hint fails the write: S3 refuses the body (BadDigest); s3rver, which does not check
    // Content-MD5, stores it and answers an ETag that is not the hint.
    const wrong = 'f'.repeat(32);
    const refused = await errorCode(
      provider.put('/hint/wrong.bin', Readable.from(chunks(data)), { size: data.length, md5Hint: wrong }),
    );
    expect(refused).toBe('corrupted');
    // The engine's next attempt: hints are no longer trusted, the MD5 is computed here.
    const again = await provider.put('/hint/wrong.bin', Readable.from(chunks(data)), {
      size: data.length,
      md5Hint: wrong,
    });
    expect(again.hashes?.md5).toBe(md5);
    expect((await readAll(await provider.openRead('/hint/wrong.bin'))).equals(data)).toBe(true);
  });

  it('sends a small file with the source’s MD5 hint as its Content-MD5 (nothing hashed here), and learns from a wrong one', async () => {
    // A provider of its own: hints trusted again.
    await withAnother(async (fresh) => {
      const data = patternBytes(40_000, 5);
      const md5 = createHash('md5').update(data).digest('hex');
      const right = await fresh.put('/small-hint/right.bin', Readable.from([data]), {
        size: data.length,
        md5Hint: md5,
      });
      expect(right.hashes?.md5).toBe(md5);
      expect((await fresh.stat('/small-hint/right.bin')).hashes?.md5).toBe(md5);
      // A hint that is not the bytes' MD5: s3rver stores them, its ETag tells, the write fails.
      const wrong = 'e'.repeat(32);
      const refused = await errorCode(
        fresh.put('/small-hint/wrong.bin', Readable.from([data]), { size: data.length, md5Hint: wrong }),
      );
      expect(refused).toBe('corrupted');
      // The engine's next attempt: the MD5 is computed here.
      const again = await fresh.put('/small-hint/wrong.bin', Readable.from([data]), {
        size: data.length,
        md5Hint: wrong,
      });
      expect(again.hashes?.md5).toBe(md5);
      expect((await readAll(await fresh.openRead('/small-hint/wrong.bin'))).equals(data)).toBe(true);
    });
  });

  it('sends a small file with the source’s own MD5 as its Content-MD5, fails it while the bytes do not match it, and still trusts hints', async () => {
    await withAnother(async (fresh) => {
      const data = patternBytes(30_000, 6);
      const md5 = createHash('md5').update(data).digest('hex');
      const right = await fresh.put('/known-md5/right.bin', Readable.from([data]), {
        size: data.length,
        hashes: { md5 },
      });
      expect(right.hashes?.md5).toBe(md5);
      expect((await fresh.stat('/known-md5/right.bin')).hashes?.md5).toBe(md5);
      // The source's MD5 is not the bytes' (they changed on the way): every attempt fails, as no
      // MD5 computed here stands in for the source's own.
      const wrong = 'd'.repeat(32);
      for (let attempt = 0; attempt < 2; attempt++) {
        const failed = await errorCode(
          fresh.put('/known-md5/wrong.bin', Readable.from([data]), { size: data.length, hashes: { md5: wrong } }),
        );
        expect(failed).toBe('corrupted');
      }
      // Hints are still trusted: a wrong one is sent (and fails) rather than replaced by a computed MD5.
      const hinted = await errorCode(
        fresh.put('/known-md5/hinted.bin', Readable.from([data]), { size: data.length, md5Hint: wrong }),
      );
      expect(hinted).toBe('corrupted');
    });
  });

  it('gives a small file’s read buffer back to its ring once the PUT is answered, and stores the bytes sent', async () => {
    const data = patternBytes(20_000, 9);
    const md5 = createHash('md5').update(data).digest('hex');
    const ring = new BufferRing(64 * 1024, 4);
    const buffer = ring.take();
    data.copy(buffer);
    const chunk = ring.lend(buffer, data.length);
    await provider.put('/recycled/a.bin', Readable.from([chunk]), { size: data.length, hashes: { md5 } });
    // The next read goes into the same buffer: no new one allocated.
    const next = ring.take();
    expect(next === buffer).toBe(true);
    expect(ring.allocated).toBe(1);
    next.fill(0);
    expect((await readAll(await provider.openRead('/recycled/a.bin'))).equals(data)).toBe(true);
  });

  it('reports an MD5 only for what it checked: none for a multipart write, whatever the source declared', async () => {
    expect(provider.checkedWrites.has('md5')).toBe(true);
    const data = patternBytes(2 * provider.chunkSize + 1000, 78);
    const md5 = createHash('md5').update(data).digest('hex');
    // Unknown size: the write goes multipart; the ETag of the whole is not its MD5.
    const e = await provider.put('/s/multi.bin', Readable.from(chunks(data)), { size: -1, hashes: { md5 } });
    expect(e.size).toBe(data.length);
    expect(e.hashes?.md5).toBeUndefined();
    expect((await readAll(await provider.openRead('/s/multi.bin'))).equals(data)).toBe(true);
  });

  it('reports the bucket usage for the kinds with usage detail, and no about() for s3_compatible', async () => {
    expect(provider.about).toBeUndefined();
    expect(provider.features.about).toBe(false);
    const wasabi = await openS3('wasabi', {
      bucket: 'usage',
      access_key_id: server.accessKeyId,
      secret_access_key: server.secretAccessKey,
      endpoint: server.endpoint,
      path_style: true,
    });
    try {
      expect(wasabi.features.about).toBe(true);
      expect(await wasabi.about?.()).toEqual({ used: 0 });
      await wasabi.put('/a/x.bin', Readable.from([Buffer.alloc(1234)]), { size: 1234 });
      await wasabi.put('/b.bin', Readable.from([Buffer.alloc(766)]), { size: 766 });
      expect(await wasabi.about?.()).toEqual({ used: 2000 });
    } finally {
      await wasabi.close();
    }
  });

  it('refuses a body shorter or longer than announced instead of waiting for it', async () => {
    const data = patternBytes(8 * 1024 * 1024, 78);
    expect(await errorCode(provider.put('/s/short.bin', Readable.from(chunks(data)), { size: data.length + 10 }))).toBe(
      'corrupted',
    );
    expect(await errorCode(provider.put('/s/long.bin', Readable.from(chunks(data)), { size: data.length - 10 }))).toBe(
      'corrupted',
    );
  });
});

function chunks(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += 64 * 1024) out.push(data.subarray(i, i + 64 * 1024));
  return out;
}
