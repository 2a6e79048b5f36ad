export * from './tasks-service.ts';
export * from './runner.ts';
export * from './views.ts';
