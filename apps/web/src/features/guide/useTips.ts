import { useEffect } from 'react';
import { guideStore, hideTips, showTips, type TipStep } from './store.ts';

/**
 * Shows a chain of tips while the calling screen is mounted and `enabled` (for example once its
 * data has loaded). Steps already acknowledged are left out; nothing shows when all are.
 * Pass a stable `steps` array (useMemo) so the chain is not restarted on every render.
 */
export function useTips(steps: TipStep[], enabled = true, options: { showCount?: boolean } = {}): void {
  const showCount = options.showCount;
  useEffect(() => {
    if (!enabled || steps.length === 0) return;
    const started = showTips(steps, { showCount });
    if (!started) return;
    const ids = new Set(steps.map((s) => s.id));
    return () => {
      const chain = guideStore.getState().chain;
      if (chain && chain.steps.every((s) => ids.has(s.id))) hideTips();
    };
  }, [steps, enabled, showCount]);
}
