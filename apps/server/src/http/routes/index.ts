import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import systemRoutes from './system.ts';

/** Every route module, each a thin layer over services. Add yours here. */
export const ROUTES: Array<(app: App, ctx: AppContext) => Promise<void>> = [systemRoutes];
