import { describe, expect, it } from 'vitest';
import { ProviderError } from './api/errors.ts';
import { PathIdCache } from './id-cache.ts';

describe('PathIdCache', () => {
  it('resolves paths from the deepest cached folder, asking only for what is missing', async () => {
    const tree: Record<string, Record<string, string>> = {
      root: { a: 'id-a' },
      'id-a': { b: 'id-b' },
      'id-b': { 'c.txt': 'id-c' },
    };
    const asked: string[] = [];
    const lookup = async (parent: string, name: string) => {
      asked.push(`${parent}/${name}`);
      return tree[parent]?.[name];
    };
    const cache = new PathIdCache('root');
    expect(await cache.resolve('/a/b/c.txt', lookup)).toBe('id-c');
    expect(asked).toEqual(['root/a', 'id-a/b', 'id-b/c.txt']);
    asked.length = 0;
    expect(await cache.resolve('/a/b', lookup)).toBe('id-b');
    expect(asked).toEqual([]);
    await expect(cache.resolve('/a/missing/x', lookup)).rejects.toSatisfy(
      (e) => ProviderError.is(e, 'not_found') && e.message.includes('/a/missing'),
    );
    expect(await cache.resolve('/', lookup)).toBe('root');
  });

  it('invalidates a renamed or removed folder and everything below it, but not look-alike siblings', () => {
    const cache = new PathIdCache('root');
    cache.set('/a', '1');
    cache.set('/a/b', '2');
    cache.set('/a/b/c', '3');
    cache.set('/ab', '4');
    cache.invalidateTree('/a');
    expect(cache.get('/a')).toBeUndefined();
    expect(cache.get('/a/b/c')).toBeUndefined();
    expect(cache.get('/ab')).toBe('4');
    expect(cache.get('/')).toBe('root');
    cache.invalidateTree('/');
    expect(cache.size).toBe(1);
    expect(cache.get('/')).toBe('root');
  });

  it('drops least recently used entries first and never the root', () => {
    const cache = new PathIdCache('root', 3);
    cache.set('/x', 'x');
    cache.set('/y', 'y');
    expect(cache.get('/x')).toBe('x'); // x is now more recent than y
    cache.set('/z', 'z');
    expect(cache.get('/y')).toBeUndefined();
    expect(cache.get('/x')).toBe('x');
    expect(cache.get('/z')).toBe('z');
    expect(cache.get('/')).toBe('root');
    expect(cache.size).toBe(3);
  });
});
