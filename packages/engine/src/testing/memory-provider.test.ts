import { runConformance } from '@skyferry/providers/testkit';
import { MemoryProvider, MemoryStore } from './memory-provider.ts';

// The in-memory provider the engine's unit tests rely on passes the same suite as every real backend.
runConformance(
  'memory provider (engine tests)',
  async () => {
    const store = new MemoryStore();
    store.writeFile('/forbidden/secret.txt', 'no');
    return {
      provider: new MemoryProvider({ store, pageSize: 500, forbidden: ['/forbidden'] }),
      forbiddenPath: '/forbidden/secret.txt',
      cleanup: async () => {},
    };
  },
  { pagingCount: 1100, bigFileSize: 12 * 1024 * 1024, streamFileSize: 4 * 1024 * 1024 },
);
