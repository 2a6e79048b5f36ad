import { describe, expect, it } from 'vitest';
import type { ListOptions, Page, Provider } from '@skyferry/providers';
import { foldName, searchStep } from './search.ts';

const file = (path: string) => ({ path, name: path.split('/').pop() ?? '', kind: 'file' as const, size: 1 });

describe('search steps', () => {
  it('folds case and accents the same way on both sides', () => {
    expect(foldName('Été RÉSUMÉ')).toBe(foldName('ete resume'));
  });

  it('uses the service’s own search where the provider has one, its pages carried in the token', async () => {
    const asked: Array<[string, string, string | undefined]> = [];
    const provider = {
      search: async (dir: string, query: string, opts: ListOptions = {}): Promise<Page> => {
        asked.push([dir, query, opts.pageToken]);
        return opts.pageToken
          ? { entries: [file('/a/two.txt')] }
          : { entries: [file('/a/one.txt')], nextPageToken: 'p2' };
      },
      list: async () => {
        throw new Error('a provider that searches is not walked');
      },
    } as unknown as Provider;
    const first = await searchStep(provider, '/a', 'o', null);
    expect(first.items.map((i) => i.path)).toEqual(['/a/one.txt']);
    expect(first.page_token).not.toBeNull();
    const second = await searchStep(provider, '/a', 'o', first.page_token);
    expect(second.items.map((i) => i.path)).toEqual(['/a/two.txt']);
    expect(second.page_token).toBeNull();
    expect(asked).toEqual([
      ['/a', 'o', undefined],
      ['/a', 'o', 'p2'],
    ]);
  });
});
