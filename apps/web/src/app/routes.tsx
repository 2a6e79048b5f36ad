import { Suspense, useState } from 'react';
import { Navigate, useRoutes, type RouteObject } from 'react-router';
import {
  CallbackLoginPage,
  CallbackLogoutPage,
  ErrorPage,
  LoadingPage,
  ScreenLoader,
  StartupGate,
  WhenStarted,
} from '../features/startup/pages.tsx';
import { AppLayout } from './layout/AppLayout.tsx';
import { RootLayout } from './layout/RootLayout.tsx';
import {
  EcologyAppPage,
  EcologyDetailPage,
  EcologyPage,
  BuyPage,
  CheckoutPage,
  ExplorerPage,
  MyAppsPage,
  ManagePage,
  PhotosPage,
  RunPage,
  SettingsPage,
  SlimExplore,
  SlimPage,
  SurveyPage,
  TaskPage,
  TasksPage,
  TransferPage,
} from './screens.ts';

/**
 * Routes inside the sidebar layout (spec section 2). `narrow` marks the narrow-sidebar screens.
 * A feature replaces its placeholder by changing its `element` line.
 */
export const LAYOUT_ROUTES: Array<RouteObject & { path: string; titleKey: string; narrow?: boolean }> = [
  { path: '/transfer', titleKey: 'page.transfer', element: <TransferPage kind="migrate" key="migrate" /> },
  { path: '/sync', titleKey: 'page.sync', element: <TransferPage kind="sync" key="sync" /> },
  { path: '/manage', titleKey: 'page.manage', element: <ManagePage /> },
  { path: '/manage/explorer', titleKey: 'page.explorer', element: <ExplorerPage /> },
  {
    path: '/manage/photos',
    titleKey: 'page.photos',
    narrow: true,
    element: <PhotosPage />,
  },
  { path: '/buy', titleKey: 'page.buy', element: <BuyPage /> },
  { path: '/myapp', titleKey: 'page.myapp', element: <MyAppsPage /> },
  { path: '/slim', titleKey: 'page.slim', element: <SlimPage /> },
  {
    path: '/slim/explore',
    titleKey: 'page.slimExplore',
    narrow: true,
    element: <SlimExplore />,
  },
  { path: '/ecology', titleKey: 'page.ecology', element: <EcologyPage /> },
  { path: '/ecology/detail', titleKey: 'page.ecologyDetail', element: <EcologyDetailPage /> },
  { path: '/user', titleKey: 'page.user', element: <SettingsPage /> },
  // The Tasks page (DECISIONS: beyond the spec's screens): every task, its runs and their files.
  { path: '/tasks', titleKey: 'page.tasks', element: <TasksPage /> },
  { path: '/tasks/:id', titleKey: 'page.task', element: <TaskPage /> },
  { path: '/tasks/:id/runs/:runId', titleKey: 'page.run', element: <RunPage /> },
];

/** Route names the spec gives (slim, SlimExplore, Error, Loading, EcologyApp). */
export const ROUTE_NAMES: Record<string, string> = {
  '/slim': 'slim',
  '/slim/explore': 'SlimExplore',
  '/error': 'Error',
  '/loading': 'Loading',
  '/ecology/app': 'EcologyApp',
};

/** Routes outside the layout that still run start-up (they wait for it full screen). */
export const BARE_ROUTES: RouteObject[] = [
  {
    path: '/ecology/app',
    element: (
      <Suspense fallback={null}>
        <EcologyAppPage />
      </Suspense>
    ),
    handle: { name: 'EcologyApp' },
  },
  // Buying: the built-in test checkout (a window of its own) and the questionnaire.
  {
    path: '/billing/checkout',
    element: (
      <Suspense fallback={<ScreenLoader />}>
        <CheckoutPage />
      </Suspense>
    ),
  },
  {
    path: '/survey',
    element: (
      <Suspense fallback={<ScreenLoader />}>
        <SurveyPage />
      </Suspense>
    ),
  },
];

/** Routes outside the layout and outside start-up: the callbacks, the error and loading pages. */
export const UNCHECKED_ROUTES: RouteObject[] = [
  { path: '/callback-login', element: <CallbackLoginPage /> },
  { path: '/callback-logout', element: <CallbackLogoutPage /> },
  { path: '/error', element: <ErrorPage />, handle: { name: ROUTE_NAMES['/error'] } },
  { path: '/loading', element: <LoadingPage />, handle: { name: ROUTE_NAMES['/loading'] } },
];

export function appRoutes(): RouteObject[] {
  const layoutRoutes: RouteObject[] = LAYOUT_ROUTES.map(({ path, element, narrow, titleKey }) => ({
    path,
    element,
    handle: { narrow: narrow === true, titleKey, name: ROUTE_NAMES[path] },
  }));
  return [
    {
      element: <RootLayout />,
      children: [
        ...UNCHECKED_ROUTES,
        {
          element: <StartupGate />,
          children: [
            { path: '/', element: <Navigate to="/transfer" replace /> },
            { element: <AppLayout routes={layoutRoutes} />, children: layoutRoutes },
            { element: <WhenStarted />, children: BARE_ROUTES },
            { path: '*', element: <Navigate to="/transfer" replace /> },
          ],
        },
      ],
    },
  ];
}

/**
 * The app's routes under App's BrowserRouter. Matched by the component router, not a data router
 * (createBrowserRouter): nothing uses loaders or actions, and the data router is 15 KB of
 * compressed script more before the first paint.
 */
export function AppRoutes() {
  const [routes] = useState(appRoutes);
  return useRoutes(routes);
}
