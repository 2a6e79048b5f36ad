import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import systemRoutes from './system.ts';
import accountPageRoutes from './account-pages.ts';
import accountRoutes from './account.ts';
import cloudRoutes from './clouds.ts';
import fileRoutes from './files.ts';
import initRoutes from './init.ts';
import systemCloudRoutes from './system-clouds.ts';
import userRoutes from './users.ts';
import taskRoutes from './tasks.ts';
import taskRunRoutes from './task-runs.ts';
import cleanupRoutes from './cleanup.ts';
import oauthRoutes from './oauth.ts';
import operatorRoutes from './operator.ts';
import supportRoutes from './support.ts';
import ecologyRoutes from './ecology.ts';
import billingRoutes from './billing.ts';
import exportRoutes from './exports.ts';
import wopiRoutes from './wopi.ts';

/** Every route module, each a thin layer over services. Add yours here. */
export const ROUTES: Array<(app: App, ctx: AppContext) => Promise<void>> = [
  systemRoutes,
  initRoutes,
  accountRoutes,
  accountPageRoutes,
  userRoutes,
  systemCloudRoutes,
  cloudRoutes,
  fileRoutes,
  taskRoutes,
  taskRunRoutes,
  cleanupRoutes,
  oauthRoutes,
  operatorRoutes,
  supportRoutes,
  ecologyRoutes,
  billingRoutes,
  exportRoutes,
  wopiRoutes,
];
