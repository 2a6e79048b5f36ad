export * from './api/index.ts';
export * from './path.ts';
export * from './hashing.ts';
export * from './backends/index.ts';
