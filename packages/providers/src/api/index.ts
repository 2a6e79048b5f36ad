export * from './types.ts';
export * from './errors.ts';
export * from './registry.ts';
