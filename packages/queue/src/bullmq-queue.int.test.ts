import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { BullJobQueue } from './bullmq-queue.ts';
import { jobQueueContract, type TestQueue } from './testkit/contract.ts';
import type { QueueOptions } from './types.ts';

// One key prefix per test file keeps this file's keys apart from every other user of the Redis.
const prefix = `t-${randomUUID().slice(0, 8)}`;

jobQueueContract('BullMQ, Redis', () => ({
  create<T>(options: QueueOptions): TestQueue<T> {
    return new BullJobQueue<T>({ ...options, redisUrl: inject('redisUrl'), prefix });
  },
}));
