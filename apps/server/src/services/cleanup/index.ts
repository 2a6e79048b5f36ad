export * from './cleanup-service.ts';
export * from './runner.ts';
export * from './system.ts';
export * from './views.ts';
