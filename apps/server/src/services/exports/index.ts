export { ExportsService, type ExportsServiceOptions } from './exports-service.ts';
