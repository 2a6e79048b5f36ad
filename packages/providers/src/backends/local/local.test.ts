import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openProvider } from '../../api/registry.ts';
import { ProviderError } from '../../api/errors.ts';
import '../index.ts';
import type { LocalProvider } from './local.ts';
import { LOCAL_TEMP_PREFIX, openLocal } from './local.ts';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof ProviderError ? err.code : `not a ProviderError: ${String(err)}`;
  }
}

describe('local backend confinement', () => {
  let base: string;
  let root: string;
  let outside: string;
  let provider: LocalProvider;

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-local-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(join(root, 'box'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'box', 'inner.txt'), 'inner');
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'box', 'secret-link.txt'));
    symlinkSync(join(root, 'box', 'inner.txt'), join(root, 'inside-link.txt'));
    provider = await openLocal({ path: root }, { localRoots: [root] });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('is registered as kind local and refuses folders outside the operator roots', async () => {
    const p = await openProvider('local', { path: join(root, 'box') }, { localRoots: [root] });
    expect(p.kind).toBe('local');
    expect((await p.list('/')).entries.map((e) => e.name)).toEqual(['inner.txt']);
    expect(await code(openProvider('local', { path: outside }, { localRoots: [root] }))).toBe('permission');
    expect(await code(openProvider('local', { path: join(root, 'escape') }, { localRoots: [root] }))).toBe(
      'permission',
    );
    expect(await code(openProvider('local', { path: root }, { localRoots: [] }))).toBe('permission');
    expect(await code(openProvider('local', { path: 'relative/path' }, { localRoots: [root] }))).toBe('invalid_name');
  });

  it('detects that this disk tells names apart by case', () => {
    expect(provider.features.caseInsensitive).toBe(false);
  });

  it('never reads, lists or writes through a link that leaves the root', async () => {
    expect(await code(provider.stat('/escape/secret.txt'))).toBe('permission');
    expect(await code(provider.openRead('/box/secret-link.txt'))).toBe('permission');
    expect(await code(provider.list('/escape'))).toBe('permission');
    expect(await code(provider.put('/escape/new.txt', Readable.from([Buffer.from('x')]), { size: 1 }))).toBe(
      'permission',
    );
    expect(await code(provider.mkdir('/escape/sub'))).toBe('permission');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'sub'))).toBe(false);
    // Listings do not show links that leave the root; links inside it are shown as what they point to.
    const names = (await provider.list('/')).entries.map((e) => `${e.name}:${e.kind}`);
    expect(names).toEqual(['box:dir', 'inside-link.txt:file']);
    expect((await provider.list('/box')).entries.map((e) => e.name)).toEqual(['inner.txt']);
  });

  it('refuses dot-dot segments and NUL in paths and names', async () => {
    expect(await code(provider.stat('/box/../../outside/secret.txt'))).toBe('invalid_name');
    expect(await code(provider.put('/../x.txt', Readable.from([]), { size: 0 }))).toBe('invalid_name');
    expect(await code(provider.rename('/box/inner.txt', '../inner.txt'))).toBe('invalid_name');
    expect(await code(provider.rename('/box/inner.txt', 'a/b'))).toBe('invalid_name');
    expect(await code(provider.stat('/box/a\0b'))).toBe('invalid_name');
  });

  it('removing a link that leaves the root is refused and the outside stays intact', async () => {
    expect(await code(provider.rmdir('/escape'))).toBe('permission');
    expect(await code(provider.remove('/box/secret-link.txt'))).toBe('permission');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('a cancelled write leaves no file and no temporary file behind', async () => {
    const ac = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        sent += 64 * 1024;
        if (sent > 1024 * 1024) ac.abort();
        this.push(Buffer.alloc(64 * 1024, 1));
      },
    });
    expect(await code(provider.put('/box/big.bin', body, { size: -1 }, { signal: ac.signal }))).toBe('canceled');
    expect(readdirSync(join(root, 'box')).sort()).toEqual(['inner.txt', 'secret-link.txt']);
  });

  it('keeps modification times and hides in-progress temporary files', async () => {
    const modTime = new Date('2021-03-04T05:06:07.000Z');
    writeFileSync(join(root, 'box', LOCAL_TEMP_PREFIX + 'leftover'), 'x');
    const e = await provider.put('/box/t.txt', Readable.from([Buffer.from('hello')]), { size: 5, modTime });
    expect(e.modTime?.getTime()).toBe(modTime.getTime());
    expect(await readAll(await provider.openRead('/box/t.txt', { range: { start: 1, end: 3 } }))).toEqual(
      Buffer.from('ell'),
    );
    expect((await provider.list('/box')).entries.map((x) => x.name)).toEqual(['inner.txt', 't.txt']);
    expect(await code(provider.stat('/box/' + LOCAL_TEMP_PREFIX + 'leftover'))).toBe('not_found');
  });

  it('trash moves items into the hidden trash folder', async () => {
    await provider.trash('/box/inner.txt');
    expect(await code(provider.stat('/box/inner.txt'))).toBe('not_found');
    expect((await provider.list('/')).entries.map((e) => e.name)).not.toContain('.skyferry-trash');
    const bins = readdirSync(join(root, '.skyferry-trash'));
    expect(bins).toHaveLength(1);
    expect(readFileSync(join(root, '.skyferry-trash', bins[0] as string, 'box', 'inner.txt'), 'utf8')).toBe('inner');
  });
});
