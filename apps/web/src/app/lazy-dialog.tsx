import { lazy, Suspense, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { withRestStyles } from './lazy-styles.ts';

const loaders: Array<() => Promise<unknown>> = [];

/**
 * Fetches every lazy dialog's chunk (once the page has nothing better to do: see Hosts), so that
 * opening one later is immediate.
 */
export function preloadLazyDialogs(): void {
  for (const load of loaders) void load().catch(() => undefined);
}

/** Tells its parent once its children have mounted. */
function OnMount({ children, onMount }: { children: ReactNode; onMount: () => void }) {
  useEffect(onMount, [onMount]);
  return children;
}

/**
 * A dialog in a chunk of its own: nothing is fetched until it is first opened, and from then on it
 * stays mounted so that closing animates as usual. It mounts closed and opens a render later, as
 * if it had always been there: a dialog notes what had the focus when it opens (to give it back
 * on close), not when it mounts.
 */
export function lazyDialog<P extends { opened: boolean }>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loading: Promise<ComponentType<P>> | undefined;
  const once = () => (loading ??= withRestStyles(load));
  loaders.push(once);
  const Dialog = lazy(() => once().then((component) => ({ default: component })));
  return function LazyDialog(props: P) {
    const [wanted, setWanted] = useState(props.opened);
    const [mounted, setMounted] = useState(false);
    if (props.opened && !wanted) setWanted(true);
    if (!wanted) return null;
    return (
      <Suspense fallback={null}>
        <OnMount onMount={() => setMounted(true)}>
          <Dialog {...props} opened={props.opened && mounted} />
        </OnMount>
      </Suspense>
    );
  };
}
