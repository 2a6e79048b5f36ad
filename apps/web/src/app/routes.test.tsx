import type { RouteObject } from 'react-router';
import { describe, expect, it } from 'vitest';
import { StartupGate } from '../features/startup/pages.tsx';
import { appRoutes, LAYOUT_ROUTES } from './routes.tsx';

function paths(routes: RouteObject[] = []): string[] {
  return routes.flatMap((r) => [...(r.path ? [r.path] : []), ...paths(r.children)]);
}

describe('routes', () => {
  const root = appRoutes()[0]!;
  const gate = root.children?.find((r) => (r.element as { type?: unknown } | undefined)?.type === StartupGate);

  it('the callbacks, /error and /loading are outside start-up; everything else runs it', () => {
    const outside = (root.children ?? []).filter((r) => r !== gate).flatMap((r) => paths([r]));
    expect(outside.sort()).toEqual(['/callback-login', '/callback-logout', '/error', '/loading']);
    const inside = paths(gate?.children);
    expect(inside).toEqual(expect.arrayContaining(['/', '/transfer', '/user', '/ecology/app', '*']));
  });

  it('the sidebar layout holds the spec’s screens, with the narrow sidebar on the photos view and SlimExplore', () => {
    expect(LAYOUT_ROUTES.map((r) => r.path)).toEqual([
      '/transfer',
      '/sync',
      '/manage',
      '/manage/explorer',
      '/manage/photos',
      '/buy',
      '/myapp',
      '/slim',
      '/slim/explore',
      '/ecology',
      '/ecology/detail',
      '/user',
      '/tasks',
      '/tasks/:id',
      '/tasks/:id/runs/:runId',
    ]);
    expect(LAYOUT_ROUTES.filter((r) => r.narrow).map((r) => r.path)).toEqual(['/manage/photos', '/slim/explore']);
    const layout = gate?.children?.find((r) => r.children?.length);
    const names = Object.fromEntries(
      (layout?.children ?? []).map((r) => [r.path, (r.handle as { name?: string }).name]),
    );
    expect(names['/slim']).toBe('slim');
    expect(names['/slim/explore']).toBe('SlimExplore');
  });
});
