import { Code } from '@skyferry/contract';
import { useEffect } from 'react';
import { ApiRequestError } from '../../api/client.ts';

/** The server answered that the task (or run) is not the caller's, or gone. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiRequestError && err.code === Code.NOT_FOUND;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Calls `read` every `everyMs` while `active` (a run or a verification is going on). */
export function useRepeat(active: boolean, read: () => Promise<unknown>, everyMs: number): void {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void read(), everyMs);
    return () => clearInterval(timer);
  }, [active, read, everyMs]);
}
