import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorCode as code } from '../../testkit/conformance.ts';
import { openLocal, type LocalProvider } from './local.ts';

/**
 * The server's own files (its data dir and database) may lie inside a root; the server passes their
 * real paths as `localProtected` and the backend refuses them on every operation, as if outside.
 */
describe('local backend: protected paths inside the root', () => {
  let base: string;
  let data: string;
  let db: string;
  let p: LocalProvider;

  beforeEach(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'skyferry-protected-')));
    data = join(base, 'srv', 'data');
    db = join(base, 'skyferry.db');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'secret'), 'SECRET');
    writeFileSync(db, 'DATABASE');
    writeFileSync(join(base, 'srv', 'readme.txt'), 'hello');
    writeFileSync(join(base, 'decoy.db'), 'decoy');
    symlinkSync(data, join(base, 'link-to-data'));
    p = await openLocal({ path: base }, { localRoots: [base], localProtected: [data, db] });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('lists neither them nor links to them', async () => {
    expect((await p.list('/')).entries.map((e) => e.name)).toEqual(['decoy.db', 'srv']);
    expect((await p.list('/srv')).entries.map((e) => e.name)).toEqual(['readme.txt']);
  });

  it('refuses reading, hashing and listing them, through links too', async () => {
    for (const path of ['/srv/data/secret', '/skyferry.db', '/link-to-data/secret']) {
      expect(await code(p.stat(path)), path).toBe('permission');
      expect(await code(p.openRead(path)), path).toBe('permission');
      expect(await code(p.hash(path, 'sha256')), path).toBe('permission');
    }
    expect(await code(p.list('/srv/data'))).toBe('permission');
  });

  it('refuses writing into them or over them, by put, chunk writer, copy, move and rename', async () => {
    const src = { size: 1 };
    expect(await code(p.put('/srv/data/planted', Readable.from([Buffer.from('x')]), src))).toBe('permission');
    expect(await code(p.put('/skyferry.db', Readable.from([Buffer.from('x')]), src))).toBe('permission');
    expect(await code(p.openChunkWriter('/srv/data/secret', src))).toBe('permission');
    expect(await code(p.mkdir('/srv/data/sub'))).toBe('permission');
    const decoy = await p.stat('/decoy.db');
    expect(await code(p.copy(decoy, '/skyferry.db'))).toBe('permission');
    expect(await code(p.move(decoy, '/srv/data/secret'))).toBe('permission');
    expect(await code(p.rename('/decoy.db', 'skyferry.db'))).toBe('permission');
    expect(readFileSync(db, 'utf8')).toBe('DATABASE');
    expect(readFileSync(join(data, 'secret'), 'utf8')).toBe('SECRET');
    expect(existsSync(join(data, 'planted'))).toBe(false);
  });

  it('never removes or moves them, nor a folder that holds them', async () => {
    expect(await code(p.remove('/skyferry.db'))).toBe('permission');
    expect(await code(p.rmdir('/srv/data'))).toBe('permission');
    expect(await code(p.rmdir('/srv'))).toBe('permission');
    expect(await code(p.trash('/srv'))).toBe('permission');
    expect(await code(p.rename('/srv', 'gone'))).toBe('permission');
    expect(existsSync(join(data, 'secret'))).toBe(true);
    // Everything else still works.
    await p.remove('/decoy.db');
    expect(existsSync(join(base, 'decoy.db'))).toBe(false);
  });

  it('refuses a root that is, or lies inside, a protected path', async () => {
    for (const path of [data, join(base, 'link-to-data')]) {
      expect(await code(openLocal({ path }, { localRoots: [base], localProtected: [data] })), path).toBe('permission');
    }
  });
});
