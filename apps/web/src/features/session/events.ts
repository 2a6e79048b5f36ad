/**
 * Session events other features react to: `login` (refresh what depends on the user, e.g. the
 * app list), `logout` (clear migrate and sync selections, close login-required apps), and
 * `light-logout` (the session ended but auto-login data stays).
 */
export type SessionEvent = 'login' | 'logout' | 'light-logout';

const listeners = new Map<SessionEvent, Set<() => void>>();

export function onSessionEvent(event: SessionEvent, listener: () => void): () => void {
  let set = listeners.get(event);
  if (!set) listeners.set(event, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

export function emitSessionEvent(event: SessionEvent): void {
  for (const l of [...(listeners.get(event) ?? [])]) {
    try {
      l();
    } catch (err) {
      console.error(`session ${event} listener failed`, err);
    }
  }
}
