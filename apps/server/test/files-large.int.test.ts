/**
 * A large upload through the resumable calls the web client uses (4 MB parts, streamed to the
 * cloud's multipart upload, nothing on the server's disk), then ranged and full downloads of it.
 * 1 GiB by default; CI runs 160 MiB (still a multipart upload of 32 S3 parts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_PART_SIZE, type FileItem, type UploadSession } from '@skyferry/contract';
import { startS3rver, type S3rverServer } from '@skyferry/testing';
import { startTestApp, type TestApp } from './support/app.ts';
import { FileClient } from './support/files.ts';

/** A full collection on demand (V8's gc, exposed for this measurement only). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const SIZE = Number(process.env.SKYFERRY_LARGE_UPLOAD_BYTES ?? (process.env.CI ? 160 * 1024 ** 2 : 1024 ** 3));

/** Deterministic content: a random block with each part's index written into its first bytes. */
function partOf(block: Buffer, index: number, length: number): Buffer {
  const part = Buffer.from(block.subarray(0, length));
  part.writeUInt32BE(index, 0);
  return part;
}

describe(`a ${Math.round(SIZE / 1024 ** 2)} MiB upload to S3 and ranged downloads`, () => {
  let t: TestApp;
  let s3: S3rverServer;
  let api: FileClient;
  let cloudId: string;
  const block = randomBytes(UPLOAD_PART_SIZE);
  const parts = Math.ceil(SIZE / UPLOAD_PART_SIZE);
  const lengthOf = (i: number) => (i === parts - 1 ? SIZE - i * UPLOAD_PART_SIZE : UPLOAD_PART_SIZE);

  beforeAll(async () => {
    [t, s3] = await Promise.all([startTestApp(), startS3rver({ buckets: ['large'] })]);
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const u = await t.signUp();
    api = new FileClient(base, u.headers);
    cloudId = (
      await api.ok<{ id: string }>('POST', '/api/clouds', {
        cloud_name: 's3_compatible',
        credentials: {
          bucket: 'large',
          access_key_id: s3.accessKeyId,
          secret_access_key: s3.secretAccessKey,
          endpoint: s3.endpoint,
          region: s3.region,
          path_style: true,
        },
      })
    ).id;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.stop();
  });

  it('uploads in 4 MB parts and the cloud has every byte', { timeout: 900_000 }, async () => {
    const session = await api.ok<UploadSession>('POST', '/api/cloud-manager/uploads', {
      cloud_id: cloudId,
      path: '/videos/large.bin',
      size: SIZE,
    });
    const hash = createHash('sha256');
    // One buffer for every part, so this test's own garbage does not count in the server's memory
    // (both run in this process): each part is hashed and sent before the next one is written into it.
    const scratch = Buffer.alloc(UPLOAD_PART_SIZE);
    // Live memory (heap and buffers after a full collection), not RSS: RSS also counts garbage a
    // lazy collector has not freed yet, which says nothing about what the server keeps.
    const live = () => {
      collectGarbage();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const liveBefore = live();
    let peakLive = liveBefore;
    for (let i = 0; i < parts; i += 1) {
      block.copy(scratch);
      scratch.writeUInt32BE(i, 0);
      const part = scratch.subarray(0, lengthOf(i));
      hash.update(part);
      const r = await api.putPart(session.upload_id, i * UPLOAD_PART_SIZE, part);
      expect(r.code).toBe(0);
      peakLive = Math.max(peakLive, live());
    }
    const item = await api.ok<FileItem>('POST', `/api/cloud-manager/uploads/${session.upload_id}/complete`);
    expect(item).toMatchObject({ path: '/videos/large.bin', size: SIZE, type: 1 });
    // Streamed: what the server holds does not grow with the file (it runs in this process, as does
    // the S3 server); a few parts in flight on each side, where a buffered upload would hold the whole
    // 1024 MiB. On a busy machine the S3 server falls behind and holds more parts meanwhile.
    expect(peakLive - liveBefore).toBeLessThan(128 * 1024 ** 2);

    const listed = await api.listAll(cloudId, '/videos');
    expect(listed.map((f) => [f.name, f.size])).toEqual([['large.bin', SIZE]]);

    // A range across a part boundary in the middle of the file.
    const at = Math.floor(parts / 2) * UPLOAD_PART_SIZE - 100;
    const res = await api.get(cloudId, '/videos/large.bin', { range: `bytes=${at}-${at + 299}` });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${at}-${at + 299}/${SIZE}`);
    const slice = Buffer.from(await res.arrayBuffer());
    const i = Math.floor(at / UPLOAD_PART_SIZE);
    const expected = Buffer.concat([partOf(block, i, lengthOf(i)), partOf(block, i + 1, lengthOf(i + 1))]).subarray(
      at - i * UPLOAD_PART_SIZE,
      at - i * UPLOAD_PART_SIZE + 300,
    );
    expect(slice.equals(expected)).toBe(true);

    // The whole file streamed back hashes the same.
    const full = await api.get(cloudId, '/videos/large.bin');
    expect(full.headers.get('content-length')).toBe(String(SIZE));
    const back = createHash('sha256');
    let received = 0;
    for await (const chunk of full.body as unknown as AsyncIterable<Uint8Array>) {
      back.update(chunk);
      received += chunk.length;
    }
    expect(received).toBe(SIZE);
    expect(back.digest('hex')).toBe(hash.digest('hex'));
  });
});
