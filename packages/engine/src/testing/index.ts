export * from './memory-provider.ts';
