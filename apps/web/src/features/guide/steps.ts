import type { TFunction } from 'i18next';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { GuideStep, TipStep } from './store.ts';
import { useTips } from './useTips.ts';

/** The default highlight of each guide step: an element carrying `data-guide="<step>"`. */
export function guideTarget(id: GuideStep): string {
  return `[data-guide="${id}"]`;
}

/** A guide step's tip with its translated title and text (namespace `guide`, key `steps.<id>`). */
export function guideTip(id: GuideStep, t: TFunction, overrides: Partial<TipStep> = {}): TipStep {
  return {
    id,
    target: guideTarget(id),
    title: t(`guide:steps.${id}.title`),
    content: t(`guide:steps.${id}.content`),
    skip: true,
    size: 'small',
    ...overrides,
  };
}

/**
 * Shows guide steps as one chain while the caller is mounted and `enabled`, each remembered once
 * seen. Mark the elements with `data-guide="<step>"` (or pass targets). For example the transfer
 * screen: `useGuideSteps(['migrate-1', 'migrate-2'], ready)`.
 */
export function useGuideSteps(
  ids: readonly GuideStep[],
  enabled = true,
  overrides: Partial<Record<GuideStep, Partial<TipStep>>> = {},
): void {
  const { t, i18n } = useTranslation('guide');
  const key = ids.join('|');
  const overrideKey = JSON.stringify(Object.keys(overrides));
  const steps = useMemo(
    () => ids.map((id) => guideTip(id, t, overrides[id])),
    // Rebuild only when the ids, their overrides' keys or the language change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [key, overrideKey, i18n.language],
  );
  useTips(steps, enabled, { showCount: ids.length > 1 });
}
