import type { Provider } from '../../api/types.ts';

/**
 * A provider that opens on its first call, for tests that need a handle on credentials the
 * server refuses: the backends check credentials when opened, so the refusal (from the real
 * server) surfaces from that first call instead.
 */
export function openedOnFirstCall(open: () => Promise<Provider>): Provider {
  let opened: Promise<Provider> | undefined;
  return new Proxy({} as Provider, {
    get(_target, prop) {
      if (prop === 'then') return undefined;
      if (prop === 'close') {
        return async () => {
          const p = await opened?.catch(() => undefined);
          await p?.close?.();
        };
      }
      return async (...args: unknown[]) => {
        opened ??= open();
        const p = await opened;
        const member = (p as unknown as Record<string | symbol, unknown>)[prop];
        return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).apply(p, args) : member;
      };
    },
  });
}
