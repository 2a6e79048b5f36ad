export * from './process.ts';
export * from './postgres.ts';
export * from './redis.ts';
