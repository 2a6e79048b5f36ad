import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { PlaceholderPage } from '../features/placeholder/PlaceholderPage.tsx';
import { AppLayout } from './layout/AppLayout.tsx';

/** Routes inside the sidebar layout (spec section 2). `narrow` marks the narrow-sidebar screens. */
export const LAYOUT_ROUTES: Array<RouteObject & { path: string; titleKey: string; narrow?: boolean }> = [
  { path: '/transfer', titleKey: 'page.transfer', element: <PlaceholderPage titleKey="page.transfer" /> },
  { path: '/sync', titleKey: 'page.sync', element: <PlaceholderPage titleKey="page.sync" /> },
  { path: '/manage', titleKey: 'page.manage', element: <PlaceholderPage titleKey="page.manage" /> },
  { path: '/manage/explorer', titleKey: 'page.explorer', element: <PlaceholderPage titleKey="page.explorer" /> },
  {
    path: '/manage/photos',
    titleKey: 'page.photos',
    narrow: true,
    element: <PlaceholderPage titleKey="page.photos" />,
  },
  { path: '/buy', titleKey: 'page.buy', element: <PlaceholderPage titleKey="page.buy" /> },
  { path: '/myapp', titleKey: 'page.myapp', element: <PlaceholderPage titleKey="page.myapp" /> },
  { path: '/slim', titleKey: 'page.slim', element: <PlaceholderPage titleKey="page.slim" /> },
  {
    path: '/slim/explore',
    titleKey: 'page.slimExplore',
    narrow: true,
    element: <PlaceholderPage titleKey="page.slimExplore" />,
  },
  { path: '/ecology', titleKey: 'page.ecology', element: <PlaceholderPage titleKey="page.ecology" /> },
  {
    path: '/ecology/detail',
    titleKey: 'page.ecologyDetail',
    element: <PlaceholderPage titleKey="page.ecologyDetail" />,
  },
  { path: '/user', titleKey: 'page.user', element: <PlaceholderPage titleKey="page.user" /> },
];

/** Routes outside the layout; the two callbacks skip start-up checks. */
export const BARE_ROUTES: RouteObject[] = [
  { path: '/callback-login', element: <PlaceholderPage titleKey="page.loading" /> },
  { path: '/callback-logout', element: <PlaceholderPage titleKey="page.loading" /> },
  { path: '/error', element: <PlaceholderPage titleKey="page.error" /> },
  { path: '/loading', element: <PlaceholderPage titleKey="page.loading" /> },
  { path: '/ecology/app', element: <PlaceholderPage titleKey="page.ecology" /> },
];

export function appRoutes(): RouteObject[] {
  return [
    { path: '/', element: <Navigate to="/transfer" replace /> },
    { element: <AppLayout />, children: LAYOUT_ROUTES.map(({ path, element }) => ({ path, element })) },
    ...BARE_ROUTES,
    { path: '*', element: <Navigate to="/transfer" replace /> },
  ];
}

export function createAppRouter() {
  return createBrowserRouter(appRoutes());
}
