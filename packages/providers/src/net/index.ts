export * from './address.ts';
export * from './guard.ts';
export * from './listeners.ts';
