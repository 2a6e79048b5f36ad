import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  Code,
  UPLOAD_PART_SIZE,
  message,
  type AuthorizationData,
  type Cloud,
  type Envelope,
  type UploadSession,
} from '@skyferry/contract';
import { createDatabase } from '@skyferry/testing';
import { STACKS } from './support/app.ts';
import { Proc, fetchEnvelope } from './support/process.ts';

// Two API processes over one database, as behind a load balancer: the parts of one upload may
// reach either process, and the upload still ends whole in the cloud. A session whose process
// died answers upload_lost in the caller's language; nobody else's call reaches a session.

const SERVER = join(import.meta.dirname, '../src/main.ts');

for (const stack of STACKS) {
  describe(`uploads across API processes [${stack.label}]`, () => {
    const root = mkdtempSync(join(tmpdir(), 'skyferry-uploads-'));
    const localRoot = join(root, 'local');
    const procs: Proc[] = [];
    let a = '';
    let b = '';
    let first: Proc;
    let token = '';
    let cloudId = '';

    const startApi = async (env: Record<string, string>): Promise<{ proc: Proc; url: string }> => {
      const proc = new Proc(SERVER, env);
      procs.push(proc);
      return { proc, url: String((await proc.ready).url) };
    };

    const put = async (
      base: string,
      id: string,
      offset: number,
      part: Buffer,
      headers: Record<string, string> = {},
    ) => {
      const res = await fetch(`${base}/api/cloud-manager/uploads/${id}?offset=${offset}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...headers },
        body: part,
      });
      return { status: res.status, body: (await res.json()) as Envelope<{ offset: number }> };
    };

    beforeAll(async () => {
      mkdirSync(join(localRoot, 'drive'), { recursive: true });
      const env = {
        DATABASE_URL:
          stack.dialect === 'postgres'
            ? await createDatabase(inject('postgresUrl'))
            : join(root, 'data', 'skyferry.db'),
        SKYFERRY_DATA_DIR: join(root, 'data'),
        SKYFERRY_SECRET: randomBytes(32).toString('base64url'),
        SKYFERRY_LOCAL_ROOTS: localRoot,
        SKYFERRY_WEB_DIST: join(root, 'no-web'),
        SKYFERRY_WORKERS: '0',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
        ...(stack.redis
          ? { REDIS_URL: inject('redisUrl'), SKYFERRY_REDIS_PREFIX: `up-${randomUUID().slice(0, 8)}` }
          : {}),
      };
      const one = await startApi(env);
      first = one.proc;
      a = one.url;
      b = (await startApi(env)).url;
      const signup = await fetchEnvelope<AuthorizationData>(a, 'POST', '/api/account/signup', {
        email: `up-${randomUUID().slice(0, 6)}@example.com`,
        password: 'a long enough password',
      });
      token = signup.data.access_token;
      // The install's first account is its operator, who may connect a folder of the server.
      const cloud = await fetchEnvelope<Cloud>(
        a,
        'POST',
        '/api/clouds',
        { cloud_name: 'local', credentials: { path: join(localRoot, 'drive') } },
        token,
      );
      expect(cloud.code).toBe(0);
      cloudId = cloud.data.id;
    }, 60_000);

    afterAll(async () => {
      await Promise.all(procs.map((p) => p.stop()));
      rmSync(root, { recursive: true, force: true });
    });

    it('takes the parts of one upload from either process and ends it whole in the cloud', async () => {
      const data = randomBytes(2 * UPLOAD_PART_SIZE + 12_345);
      const part = (i: number) => data.subarray(i * UPLOAD_PART_SIZE, (i + 1) * UPLOAD_PART_SIZE);
      const opened = await fetchEnvelope<UploadSession>(
        a,
        'POST',
        '/api/cloud-manager/uploads',
        { cloud_id: cloudId, path: '/both.bin', size: data.length },
        token,
      );
      expect(opened.code).toBe(0);
      const id = opened.data.upload_id;
      expect((await put(a, id, 0, part(0))).body.data).toEqual({ offset: UPLOAD_PART_SIZE });
      // The balancer sends the rest to the other process.
      expect((await put(b, id, UPLOAD_PART_SIZE, part(1))).body.data).toEqual({ offset: 2 * UPLOAD_PART_SIZE });
      const status = await fetchEnvelope<UploadSession>(b, 'GET', `/api/cloud-manager/uploads/${id}`, undefined, token);
      expect(status.data.offset).toBe(2 * UPLOAD_PART_SIZE);
      // A gap is refused by the holding process, with where to resume, through the other one too.
      const gap = await put(b, id, data.length - 10, data.subarray(data.length - 10));
      expect(gap.body.code).toBe(Code.CONFLICT);
      expect(gap.body.data).toEqual({ offset: 2 * UPLOAD_PART_SIZE });
      expect((await put(b, id, 2 * UPLOAD_PART_SIZE, part(2))).body.data).toEqual({ offset: data.length });
      const done = await fetchEnvelope<{ name: string; size: number }>(
        b,
        'POST',
        `/api/cloud-manager/uploads/${id}/complete`,
        undefined,
        token,
      );
      expect(done.code).toBe(0);
      expect(done.data).toMatchObject({ name: 'both.bin', size: data.length });
      expect(readFileSync(join(localRoot, 'drive', 'both.bin')).equals(data)).toBe(true);
      // Ended: neither process knows it any more.
      const after = await fetchEnvelope(b, 'GET', `/api/cloud-manager/uploads/${id}`, undefined, token);
      expect(after.code).toBe(Code.NOT_FOUND);
    });

    it('never lets another account reach a session, through either process', async () => {
      const opened = await fetchEnvelope<UploadSession>(
        a,
        'POST',
        '/api/cloud-manager/uploads',
        { cloud_id: cloudId, path: '/mine.bin', size: 10 },
        token,
      );
      const other = await fetchEnvelope<AuthorizationData>(b, 'POST', '/api/account/signup', {
        email: `other-${randomUUID().slice(0, 6)}@example.com`,
        password: 'another long password',
      });
      for (const base of [a, b]) {
        const seen = await fetchEnvelope(
          base,
          'GET',
          `/api/cloud-manager/uploads/${opened.data.upload_id}`,
          undefined,
          other.data.access_token,
        );
        expect(seen.code).toBe(Code.NOT_FOUND);
        expect(seen.msg).toBe(message('en', 'not_found'));
        const abandoned = await fetchEnvelope(
          base,
          'DELETE',
          `/api/cloud-manager/uploads/${opened.data.upload_id}`,
          undefined,
          other.data.access_token,
        );
        expect(abandoned.code).toBe(Code.NOT_FOUND);
      }
      // Still there for its owner.
      const mine = await fetchEnvelope<UploadSession>(
        b,
        'GET',
        `/api/cloud-manager/uploads/${opened.data.upload_id}`,
        undefined,
        token,
      );
      expect(mine.data.offset).toBe(0);
    });

    it('a session whose process died answers "start again" in the caller\'s language, and nothing is left in the cloud', async () => {
      const data = randomBytes(UPLOAD_PART_SIZE + 100);
      const opened = await fetchEnvelope<UploadSession>(
        a,
        'POST',
        '/api/cloud-manager/uploads',
        { cloud_id: cloudId, path: '/lost.bin', size: data.length },
        token,
      );
      const id = opened.data.upload_id;
      expect((await put(a, id, 0, data.subarray(0, UPLOAD_PART_SIZE))).body.data).toEqual({ offset: UPLOAD_PART_SIZE });
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      const lost = await put(b, id, UPLOAD_PART_SIZE, data.subarray(UPLOAD_PART_SIZE), { 'accept-language': 'de' });
      expect(lost.status).toBe(404);
      expect(lost.body.code).toBe(Code.NOT_FOUND);
      expect(lost.body.msg).toBe(message('de', 'upload_lost'));
      // Its record went with it: the next call finds nothing to pass on.
      const again = await fetchEnvelope(b, 'GET', `/api/cloud-manager/uploads/${id}`, undefined, token);
      expect(again.code).toBe(Code.NOT_FOUND);
      expect(again.msg).toBe(message('en', 'not_found'));
      const names = (
        await fetchEnvelope<{ items: Array<{ name: string }> }>(
          b,
          'POST',
          '/api/cloud-manager/list',
          { cloud_id: cloudId, path: '/' },
          token,
        )
      ).data.items.map((i) => i.name);
      expect(names).not.toContain('lost.bin');
    });
  });
}
