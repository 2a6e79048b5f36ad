import { lazy } from 'react';
import { withRestStyles } from './lazy-styles.ts';

/**
 * The screens, each a chunk of its own fetched the first time its route shows. The loaders are
 * kept apart so that the layout can start fetching the current screen while start-up runs
 * (preloadScreen), instead of after it.
 */
const loaders = {
  transfer: () =>
    withRestStyles(() => import('../features/transfer/TransferPage.tsx')).then((m) => ({ default: m.TransferPage })),
  manage: () =>
    withRestStyles(() => import('../features/manage/ManagePage.tsx')).then((m) => ({ default: m.ManagePage })),
  explorer: () =>
    withRestStyles(() => import('../features/explorer/ExplorerPage.tsx')).then((m) => ({ default: m.ExplorerPage })),
  photos: () =>
    withRestStyles(() => import('../features/photos/PhotosPage.tsx')).then((m) => ({ default: m.PhotosPage })),
  settings: () =>
    withRestStyles(() => import('../features/settings/SettingsPanel.tsx')).then((m) => ({ default: m.SettingsPage })),
  slim: () => withRestStyles(() => import('../features/slim/SlimPage.tsx')).then((m) => ({ default: m.SlimPage })),
  slimExplore: () =>
    withRestStyles(() => import('../features/slim/SlimExplore.tsx')).then((m) => ({ default: m.SlimExplore })),
  tasks: () =>
    withRestStyles(() => import('../features/taskpage/TasksPage.tsx')).then((m) => ({ default: m.TasksPage })),
  task: () => withRestStyles(() => import('../features/taskpage/TaskPage.tsx')).then((m) => ({ default: m.TaskPage })),
  run: () => withRestStyles(() => import('../features/taskpage/RunPage.tsx')).then((m) => ({ default: m.RunPage })),
  ecology: () => withRestStyles(() => import('../features/ecology/EcologyPage.tsx')),
  ecologyApp: () =>
    withRestStyles(() => import('../features/ecology/EcologyAppPage.tsx')).then((m) => ({
      default: m.EcologyAppPage,
    })),
  buy: () => withRestStyles(() => import('../features/buy/BuyPage.tsx')).then((m) => ({ default: m.BuyPage })),
  checkout: () =>
    withRestStyles(() => import('../features/buy/CheckoutPage.tsx')).then((m) => ({ default: m.CheckoutPage })),
  survey: () => withRestStyles(() => import('../features/buy/SurveyPage.tsx')).then((m) => ({ default: m.SurveyPage })),
};

export const TransferPage = lazy(loaders.transfer);
export const ManagePage = lazy(loaders.manage);
export const ExplorerPage = lazy(loaders.explorer);
export const PhotosPage = lazy(loaders.photos);
export const SettingsPage = lazy(loaders.settings);
export const SlimPage = lazy(loaders.slim);
export const SlimExplore = lazy(loaders.slimExplore);
export const TasksPage = lazy(loaders.tasks);
export const TaskPage = lazy(loaders.task);
export const RunPage = lazy(loaders.run);
export const EcologyPage = lazy(() => loaders.ecology().then((m) => ({ default: m.EcologyPage })));
export const EcologyDetailPage = lazy(() => loaders.ecology().then((m) => ({ default: m.EcologyDetailPage })));
export const MyAppsPage = lazy(() => loaders.ecology().then((m) => ({ default: m.MyAppsPage })));
export const EcologyAppPage = lazy(loaders.ecologyApp);
export const BuyPage = lazy(loaders.buy);
export const CheckoutPage = lazy(loaders.checkout);
export const SurveyPage = lazy(loaders.survey);

const BY_PATH: Record<string, () => Promise<unknown>> = {
  '/transfer': loaders.transfer,
  '/sync': loaders.transfer,
  '/manage': loaders.manage,
  '/manage/explorer': loaders.explorer,
  '/manage/photos': loaders.photos,
  '/user': loaders.settings,
  '/slim': loaders.slim,
  '/slim/explore': loaders.slimExplore,
  '/tasks': loaders.tasks,
  '/ecology': loaders.ecology,
  '/ecology/detail': loaders.ecology,
  '/myapp': loaders.ecology,
  '/buy': loaders.buy,
};

/** Starts fetching the screen of `pathname` (the module loader keeps it; the lazy screen then finds it). */
export function preloadScreen(pathname: string): void {
  void BY_PATH[pathname]?.().catch(() => undefined);
}
