import type { TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { filterText } from './parts.tsx';

const t = ((key: string, o?: { list?: string }) => (o?.list ? `${key}(${o.list})` : key)) as unknown as TFunction;

describe("a task's filter in words", () => {
  it('shows the categories, then rules, sizes and ages as rclone flags', () => {
    expect(filterText(null, t)).toBe('taskpage:settings.noFilter');
    expect(filterText({ mode: 'include', categories: ['pdf'] }, t)).toBe(
      'taskpage:settings.include(settings:defaults.categories.pdf)',
    );
    expect(
      filterText(
        {
          mode: 'include',
          categories: [],
          include: ['*.jpg'],
          rules: ['- /cache/'],
          min_size: '1k',
          max_age: '30d',
        },
        t,
      ),
    ).toBe('--include *.jpg · --filter "- /cache/" · --min-size 1k · --max-age 30d');
  });
});
