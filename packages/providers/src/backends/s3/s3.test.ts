import { describe, expect, it, vi } from 'vitest';
import { ProviderError } from '../../api/errors.ts';
import { openProvider, registeredKinds } from '../../api/registry.ts';
import '../index.ts';
import { S3ServiceError } from './client.ts';
import { s3Error } from './errors.ts';
import { S3Provider, partSizeFor, s3ConfigFrom } from './s3.ts';

const creds = { bucket: 'b', access_key_id: 'AK', secret_access_key: 'SK' };

describe('S3 configuration', () => {
  it('registers the four object-storage kinds', async () => {
    expect(registeredKinds()).toEqual(expect.arrayContaining(['amazon_s3', 'wasabi', 'backblaze_b2', 's3_compatible']));
    const p = await openProvider('wasabi', creds);
    expect(p.kind).toBe('wasabi');
    expect(p.features.bucketBased).toBe(true);
    await p.close?.();
  });

  it('applies each kind endpoint, region, path-style and checksum defaults', () => {
    const aws = s3ConfigFrom('amazon_s3', creds);
    expect(aws).toMatchObject({ region: 'us-east-1', endpoint: undefined, pathStyle: false });
    expect(aws.requestChecksumCalculation).toBe('WHEN_SUPPORTED');
    expect(aws.multipartEtagSuffix).toBe(true);
    const wasabi = s3ConfigFrom('wasabi', { ...creds, region: 'eu-central-1' });
    expect(wasabi.endpoint).toBe('https://s3.eu-central-1.wasabisys.com');
    expect(wasabi.requestChecksumCalculation).toBe('WHEN_REQUIRED');
    const b2 = s3ConfigFrom('backblaze_b2', { ...creds, endpoint: 's3.us-west-004.backblazeb2.com' });
    expect(b2).toMatchObject({ region: 'us-west-004', endpoint: 'https://s3.us-west-004.backblazeb2.com' });
    expect(() => s3ConfigFrom('backblaze_b2', creds)).toThrow(/region/);
    const minio = s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://127.0.0.1:9000', path_style: 'false' });
    expect(minio).toMatchObject({ pathStyle: false, region: 'us-east-1', multipartEtagSuffix: false });
    expect(s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://x' }).pathStyle).toBe(true);
    const when = s3ConfigFrom('amazon_s3', { ...creds, request_checksum_calculation: 'when_required' });
    expect(when.requestChecksumCalculation).toBe('WHEN_REQUIRED');
    expect(() => s3ConfigFrom('s3_compatible', creds)).toThrow(/endpoint/);
    expect(() => s3ConfigFrom('amazon_s3', { bucket: 'b' })).toThrow(/access key/);
  });
});

describe('S3 error mapping', () => {
  const sdk = (name: string, status: number, headers: Record<string, string> = {}) =>
    Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, $response: { headers } });

  it.each([
    ['NoSuchKey', 404, 'not_found', 'no_retry'],
    ['NoSuchBucket', 404, 'not_found', 'fatal'],
    ['AccessDenied', 403, 'permission', 'no_retry'],
    ['InvalidAccessKeyId', 403, 'auth_invalid', 'fatal'],
    ['SignatureDoesNotMatch', 403, 'auth_invalid', 'fatal'],
    ['ExpiredToken', 400, 'auth_expired', 'fatal'],
    ['SlowDown', 503, 'rate_limited', 'retry'],
    ['InternalError', 500, 'server', 'retry'],
    ['BadDigest', 400, 'corrupted', 'retry'],
    ['NotImplemented', 501, 'not_supported', 'no_retry'],
    ['Unknown', 502, 'server', 'retry'],
    ['Unknown', 429, 'rate_limited', 'retry'],
  ])('%s (%i) -> %s', (name, status, code, retry) => {
    const e = s3Error(sdk(name, status), '/x');
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.code).toBe(code);
    expect(e.retry).toBe(retry);
  });

  it('a Backblaze B2 transaction cap (403, "Transaction cap exceeded") is transaction_cap, fatal; a plain 403 is not', () => {
    // B2's S3-compatible API: HTTP 403, <Code>AccessDenied</Code>, the message names the cap.
    const capped = Object.assign(sdk('AccessDenied', 403), {
      message: 'Transaction cap exceeded, see the Caps & Alerts page to increase your cap',
    });
    const e = s3Error(capped, '/x');
    expect(e.code).toBe('transaction_cap');
    expect(e.retry).toBe('fatal');
    expect(e.serviceCode).toBe('AccessDenied');
    // The native API's code, should it ever come through.
    expect(s3Error(sdk('transaction_cap_exceeded', 403), '/x').code).toBe('transaction_cap');
    const denied = Object.assign(sdk('AccessDenied', 403), { message: 'Access Denied' });
    expect(s3Error(denied, '/x').code).toBe('permission');
    const storageCap = Object.assign(sdk('AccessDenied', 403), {
      message: 'Cannot upload files, storage cap exceeded',
    });
    expect(s3Error(storageCap, '/x').code).toBe('permission');
  });

  it('carries Retry-After from the response', () => {
    expect(s3Error(sdk('SlowDown', 503, { 'retry-after': '3' }), '/x').retryAfterMs).toBe(3000);
  });
});

describe('S3 stat', () => {
  /** Lets promises and timers queued so far run. */
  const turn = () => new Promise((r) => setTimeout(r, 0));

  /**
   * A provider whose HEAD and listing answer only when `answer()` is called, recording each request
   * as it is sent: `objects` are the keys that exist.
   */
  function gated(objects: string[], fail: { head?: Error; list?: Error } = {}) {
    const provider = new S3Provider(s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://127.0.0.1:1' }));
    const sent: string[] = [];
    const waiting: { what: string; go: () => void }[] = [];
    const later = <T>(what: string, value: () => T) => {
      sent.push(what);
      return new Promise<T>((resolve, reject) =>
        waiting.push({
          what,
          go: () => {
            try {
              resolve(value());
            } catch (err) {
              reject(err as Error);
            }
          },
        }),
      );
    };
    vi.spyOn(provider.client, 'headObject').mockImplementation((key) =>
      later(`HEAD ${key}`, () => {
        if (fail.head) throw fail.head;
        if (!objects.includes(key)) throw new S3ServiceError('NotFound', '', 404, {});
        return { ContentLength: 3, ETag: '"0123456789abcdef0123456789abcdef"', Metadata: {} };
      }),
    );
    vi.spyOn(provider.client, 'listObjectsV2').mockImplementation((input) =>
      later(`LIST ${input.prefix}`, () => {
        if (fail.list) throw fail.list;
        const under = objects.filter((k) => k.startsWith(input.prefix ?? ''));
        return { Contents: under.slice(0, 1).map((Key) => ({ Key, Size: 3 })), CommonPrefixes: [], IsTruncated: false };
      }),
    );
    /** Answers the requests sent by now (those starting with `only`); resolves once they were taken in. */
    const answer = async (only = '') => {
      await turn();
      for (const w of waiting.filter((x) => x.what.startsWith(only))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.go();
      }
      await turn();
    };
    return { provider, sent, answer };
  }

  it('asks for the object and the folder together when a folder is expected, one after the other otherwise', async () => {
    const folder = gated(['photos/a.jpg']);
    const st = folder.provider.stat('/photos', { expectFolder: true });
    await turn();
    // Both sent before either is answered: one round trip.
    expect(folder.sent).toEqual(['HEAD photos', 'LIST photos/']);
    await folder.answer();
    await expect(st).resolves.toMatchObject({ kind: 'dir', path: '/photos' });

    const plain = gated(['photos/a.jpg']);
    const st2 = plain.provider.stat('/photos');
    await turn();
    expect(plain.sent).toEqual(['HEAD photos']);
    await plain.answer();
    expect(plain.sent).toEqual(['HEAD photos', 'LIST photos/']);
    await plain.answer();
    await expect(st2).resolves.toMatchObject({ kind: 'dir', path: '/photos' });
  });

  it('gives the same answers with the hint: a file (even with keys under it), a folder, nothing', async () => {
    for (const expectFolder of [false, true]) {
      const run = async (path: string) => {
        const g = gated(['doc.txt', 'doc.txt/inner', 'photos/a.jpg']);
        const st = g.provider.stat(path, { expectFolder });
        st.catch(() => undefined); // met by the expectation below
        for (let i = 0; i < 3; i++) await g.answer();
        return st;
      };
      await expect(run('/doc.txt')).resolves.toMatchObject({ kind: 'file', size: 3 });
      await expect(run('/photos')).resolves.toMatchObject({ kind: 'dir' });
      await expect(run('/nothing')).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('with the hint, a refused listing does not matter for a file; a refused HEAD fails the stat once the listing is done', async () => {
    const file = gated(['doc.txt'], { list: new S3ServiceError('AccessDenied', '', 403, {}) });
    const st = file.provider.stat('/doc.txt', { expectFolder: true });
    await file.answer();
    await expect(st).resolves.toMatchObject({ kind: 'file' });

    const denied = gated(['photos/a.jpg'], { head: new S3ServiceError('AccessDenied', '', 403, {}) });
    let settled = false;
    const st2 = denied.provider.stat('/photos', { expectFolder: true }).finally(() => (settled = true));
    st2.catch(() => undefined);
    await turn();
    expect(denied.sent).toEqual(['HEAD photos', 'LIST photos/']);
    // The HEAD refused: the stat still waits for the listing it started (nothing left running).
    await denied.answer('HEAD');
    expect(settled).toBe(false);
    await denied.answer();
    await expect(st2).rejects.toMatchObject({ code: 'permission' });
  });
});

describe('S3 multipart server-side copy', () => {
  it('copies objects over the cutoff with UploadPartCopy ranges that cover every byte once', async () => {
    const size = 23 * 1024 * 1024 + 5;
    const provider = new S3Provider(
      s3ConfigFrom(
        's3_compatible',
        { ...creds, endpoint: 'http://127.0.0.1:1' },
        {
          copyCutoff: 10 * 1024 * 1024,
          copyChunkSize: 8 * 1024 * 1024,
        },
      ),
    );
    const calls: { name: string; input: Record<string, unknown> }[] = [];
    const c = provider.client;
    const record = (name: string, input: Record<string, unknown>) => calls.push({ name, input });
    vi.spyOn(c, 'headObject').mockImplementation(async (key) => {
      record('HeadObject', { key });
      if (key === 'dst.bin' && !calls.some((x) => x.name === 'CompleteMultipartUpload')) {
        throw new S3ServiceError('NotFound', '', 404, {});
      }
      return { ContentLength: size, ETag: '"abc-3"', Metadata: { mtime: '1600000000.000' } };
    });
    vi.spyOn(c, 'listObjectsV2').mockImplementation(async (input) => {
      record('ListObjectsV2', input);
      return { Contents: [], CommonPrefixes: [], IsTruncated: false };
    });
    vi.spyOn(c, 'createMultipartUpload').mockImplementation(async (input) => {
      record('CreateMultipartUpload', input);
      return 'up-1';
    });
    vi.spyOn(c, 'uploadPartCopy').mockImplementation(async (input) => {
      record('UploadPartCopy', input);
      return { ETag: `"part-${input.partNumber}"` };
    });
    vi.spyOn(c, 'completeMultipartUpload').mockImplementation(async (input) => {
      record('CompleteMultipartUpload', input);
      return {};
    });
    vi.spyOn(c, 'copyObject').mockImplementation(async (input) => {
      record('CopyObject', input);
    });
    const e = await provider.copy({ path: '/src.bin', name: 'src.bin', kind: 'file', size }, '/dst.bin');
    expect(e.size).toBe(size);
    const create = calls.find((x) => x.name === 'CreateMultipartUpload');
    expect(create?.input).toMatchObject({ key: 'dst.bin', metadata: { mtime: '1600000000.000' } });
    const parts = calls.filter((x) => x.name === 'UploadPartCopy').map((x) => x.input);
    expect(parts.map((p) => p.partNumber).sort()).toEqual([1, 2, 3]);
    const ranges = parts
      .map((p) => /bytes=(\d+)-(\d+)/.exec(String(p.range)))
      .map((m) => [Number(m?.[1]), Number(m?.[2])] as const)
      .sort((a, b) => a[0] - b[0]);
    expect(ranges[0]?.[0]).toBe(0);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]?.[0]).toBe((ranges[i - 1]?.[1] ?? 0) + 1);
    expect(ranges[ranges.length - 1]?.[1]).toBe(size - 1);
    expect(parts.every((p) => p.copySource === 'b/src.bin' && p.uploadId === 'up-1')).toBe(true);
    const complete = calls.find((x) => x.name === 'CompleteMultipartUpload');
    expect(complete?.input.parts).toEqual([
      { PartNumber: 1, ETag: '"part-1"' },
      { PartNumber: 2, ETag: '"part-2"' },
      { PartNumber: 3, ETag: '"part-3"' },
    ]);
    expect(calls.some((x) => x.name === 'CopyObject')).toBe(false);
  });
});

describe('S3 limits (defaults)', () => {
  const GiB = 1024 * 1024 * 1024;
  const MiB = 1024 * 1024;

  it('copies up to 5 GiB with one CopyObject, and anything larger in 1 GiB UploadPartCopy parts', async () => {
    const provider = new S3Provider(s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://127.0.0.1:1' }));
    const c = provider.client;
    const sizes: Record<string, number> = { 'five.bin': 5 * GiB, 'over.bin': 5 * GiB + 1 };
    const done = new Set<string>();
    const calls: { name: string; input: Record<string, unknown> }[] = [];
    vi.spyOn(c, 'headObject').mockImplementation(async (key) => {
      const src = sizes[key];
      if (src !== undefined) return { ContentLength: src, ETag: '"abc"', Metadata: {} };
      if (!done.has(key)) throw new S3ServiceError('NotFound', '', 404, {});
      return { ContentLength: sizes[key.replace('copy-', '')] ?? 0, ETag: '"def"', Metadata: {} };
    });
    vi.spyOn(c, 'listObjectsV2').mockImplementation(async () => ({
      Contents: [],
      CommonPrefixes: [],
      IsTruncated: false,
    }));
    vi.spyOn(c, 'copyObject').mockImplementation(async (input) => {
      calls.push({ name: 'CopyObject', input });
      done.add(input.key);
    });
    vi.spyOn(c, 'createMultipartUpload').mockImplementation(async (input) => {
      calls.push({ name: 'CreateMultipartUpload', input });
      return 'up-big';
    });
    vi.spyOn(c, 'uploadPartCopy').mockImplementation(async (input) => {
      calls.push({ name: 'UploadPartCopy', input });
      return { ETag: `"p${input.partNumber}"` };
    });
    vi.spyOn(c, 'completeMultipartUpload').mockImplementation(async (input) => {
      calls.push({ name: 'CompleteMultipartUpload', input });
      done.add(input.key);
      return {};
    });
    await provider.copy({ path: '/five.bin', name: 'five.bin', kind: 'file', size: 5 * GiB }, '/copy-five.bin');
    expect(calls.map((x) => x.name)).toEqual(['CopyObject']);
    calls.length = 0;
    await provider.copy({ path: '/over.bin', name: 'over.bin', kind: 'file', size: 5 * GiB + 1 }, '/copy-over.bin');
    expect(calls.some((x) => x.name === 'CopyObject')).toBe(false);
    const ranges = calls
      .filter((x) => x.name === 'UploadPartCopy')
      .map((x) => String(x.input.range))
      .sort((a, b) => Number(/\d+/.exec(a)?.[0]) - Number(/\d+/.exec(b)?.[0]));
    expect(ranges).toEqual([
      ...Array.from({ length: 5 }, (_, i) => `bytes=${i * GiB}-${(i + 1) * GiB - 1}`),
      `bytes=${5 * GiB}-${5 * GiB}`,
    ]);
    expect(calls.at(-1)?.name).toBe('CompleteMultipartUpload');
  });

  it('grows a set part size so a file of any size fits in 10,000 parts (5 MiB at least, whole MiB)', async () => {
    const provider = new S3Provider({
      ...s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://127.0.0.1:1' }),
      chunkSize: 5 * MiB,
    });
    const create = vi.spyOn(provider.client, 'createMultipartUpload').mockResolvedValue('up-1');
    const abort = vi.spyOn(provider.client, 'abortMultipartUpload').mockResolvedValue(undefined);
    for (const size of [1, 5 * MiB, 48 * GiB, 100 * GiB, 5 * 1024 * GiB]) {
      const w = await provider.openChunkWriter('/big.bin', { size });
      expect(w.chunkSize % MiB, String(size)).toBe(0);
      expect(w.chunkSize, String(size)).toBeGreaterThanOrEqual(5 * MiB);
      expect(w.chunkSize * 10_000, String(size)).toBeGreaterThanOrEqual(size);
      expect(w.chunkSize - MiB, String(size)).toBeLessThan(Math.max(5 * MiB, size / 10_000));
      await w.abort();
    }
    const w = await provider.openChunkWriter('/big.bin', { size: 100 * GiB });
    expect(w.chunkSize).toBe(11 * MiB);
    await w.abort();
    // The sizes above one part opened (and dropped) a multipart upload; the others go as one PUT.
    expect(create).toHaveBeenCalledTimes(4);
    expect(abort).toHaveBeenCalledTimes(4);
  });

  it('goes in 16 MiB parts from 256 MiB up unless a part size was set (fewer requests for big files)', async () => {
    expect(partSizeFor(-1, 5 * MiB, false)).toBe(5 * MiB); // unknown size: the set or default part
    expect(partSizeFor(255 * MiB, 5 * MiB, false)).toBe(5 * MiB);
    expect(partSizeFor(256 * MiB, 5 * MiB, false)).toBe(16 * MiB);
    expect(partSizeFor(GiB, 5 * MiB, false)).toBe(16 * MiB);
    expect(partSizeFor(GiB, 5 * MiB, true)).toBe(5 * MiB); // the user's part size stands
    expect(partSizeFor(GiB, 32 * MiB, false)).toBe(32 * MiB);
    expect(partSizeFor(1024 * GiB, 5 * MiB, false)).toBe(105 * MiB); // 10,000 parts still bound it
    const provider = new S3Provider(s3ConfigFrom('s3_compatible', { ...creds, endpoint: 'http://127.0.0.1:1' }));
    vi.spyOn(provider.client, 'createMultipartUpload').mockResolvedValue('up-1');
    vi.spyOn(provider.client, 'abortMultipartUpload').mockResolvedValue(undefined);
    const w = await provider.openChunkWriter('/big.bin', { size: GiB });
    expect(w.chunkSize).toBe(16 * MiB);
    await w.abort();
  });
});
