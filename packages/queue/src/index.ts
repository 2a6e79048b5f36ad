export * from './types.ts';
export { DatabaseJobQueue, type DatabaseQueueOptions } from './database-queue.ts';
export { BullJobQueue, type BullQueueOptions } from './bullmq-queue.ts';
