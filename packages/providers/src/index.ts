export * from './api/index.ts';
export * from './path.ts';
export * from './hashing.ts';
export * from './pacer.ts';
export * from './id-cache.ts';
export * from './encoding.ts';
export * from './chunks.ts';
export * from './backends/index.ts';
