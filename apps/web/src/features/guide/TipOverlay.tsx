import { Box, Button, Group, Paper, Text, useDirection } from '@mantine/core';
import { INTERVALS, TIP } from '@skyferry/contract';
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { layoutTip, sameLayout, tipMaxWidth, type TipLayout } from './position.ts';
import { advanceTip, currentTip, skipTips, useGuide, type TipStep } from './store.ts';

export function resolveTarget(target: TipStep['target']): Element | null {
  if (typeof target === 'function') return target();
  try {
    return document.querySelector(target);
  } catch {
    return null;
  }
}

/**
 * The onboarding tips (spec sections 4 and 9): the element outlined (4 px / 8 px padding, 8 px
 * radius) and a tooltip panel below it, or above when it would pass 95 % of the window height;
 * the position is re-checked every 60 ms. A tip never blocks the page: nothing is dimmed or
 * covered, focus stays where the user has it, and the page works while the tip shows.
 */
export function TipOverlay() {
  const tip = useGuide(currentTip);
  const chain = useGuide((s) => s.chain);
  const { t } = useTranslation('guide');
  const { dir } = useDirection();
  const panelRef = useRef<HTMLDivElement>(null);
  const [layout, setLayout] = useState<TipLayout | null>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    if (!tip) {
      setLayout(null);
      return;
    }
    const update = () => {
      const el = resolveTarget(tip.target);
      if (!el) {
        setLayout(null);
        return;
      }
      const r = el.getBoundingClientRect();
      const panel = panelRef.current;
      const size = {
        width: panel?.offsetWidth || tipMaxWidth(tip.size ?? 'small'),
        height: panel?.offsetHeight || 120,
      };
      const next = layoutTip(
        { top: r.top, left: r.left, width: r.width, height: r.height },
        size,
        { width: window.innerWidth, height: window.innerHeight },
        dir === 'rtl',
      );
      setLayout((prev) => (sameLayout(prev, next) ? prev : next));
    };
    update();
    const timer = setInterval(update, INTERVALS.tipPositionCheck);
    return () => clearInterval(timer);
  }, [tip, dir]);

  // A click on the highlighted element acknowledges the tip too.
  useEffect(() => {
    if (!tip) return;
    const onClick = (event: MouseEvent) => {
      const el = resolveTarget(tip.target);
      if (el && event.target instanceof Node && el.contains(event.target)) advanceTip('click');
    };
    document.addEventListener('click', onClick, true);
    return () => document.removeEventListener('click', onClick, true);
  }, [tip]);

  // Nothing shows until the element to highlight is on screen.
  if (!tip || !chain || !layout) return null;
  const h = layout.highlight;
  const count = chain.showCount && chain.steps.length > 1;
  const onKeyDown = (event: React.KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation();
    if (tip.skip) skipTips();
    else advanceTip('button');
  };
  return (
    <Box data-testid="tip-overlay" style={{ position: 'fixed', inset: 0, zIndex: 400, pointerEvents: 'none' }}>
      <div
        data-testid="tip-highlight"
        style={{
          position: 'fixed',
          top: h.top,
          left: h.left,
          width: h.width,
          height: h.height,
          borderRadius: TIP.highlightRadius,
          outline: '2px solid var(--mantine-color-blue-5)',
          boxShadow: '0 0 0 4px rgba(34, 139, 230, 0.25)',
          pointerEvents: 'none',
        }}
      />
      <Paper
        ref={panelRef}
        role="dialog"
        aria-modal="false"
        aria-labelledby={tip.title ? titleId : undefined}
        aria-describedby={bodyId}
        aria-label={tip.title ? undefined : t('tipLabel')}
        data-testid="tip-panel"
        data-placement={layout.placement}
        data-size={tip.size ?? 'small'}
        onKeyDown={onKeyDown}
        shadow="md"
        p="sm"
        style={{
          position: 'fixed',
          top: layout.top,
          left: layout.left,
          maxWidth: tipMaxWidth(tip.size ?? 'small'),
          width: 'max-content',
          borderRadius: TIP.highlightRadius,
          pointerEvents: 'auto',
        }}
      >
        {tip.title && (
          <Text id={titleId} fw={600} size="sm" mb={4}>
            {tip.title}
          </Text>
        )}
        <Text id={bodyId} size="sm">
          {tip.content}
        </Text>
        <Group justify="space-between" mt="sm" gap="xs" wrap="nowrap">
          <Text size="xs" c="dimmed" data-testid="tip-count">
            {count ? t('count', { n: chain.index + 1, m: chain.steps.length }) : ''}
          </Text>
          <Group gap={6} wrap="nowrap">
            {tip.skip && (
              <Button size="compact-sm" variant="subtle" color="gray" onClick={skipTips}>
                {tip.skipLabel ?? t('skip')}
              </Button>
            )}
            <Button size="compact-sm" onClick={() => advanceTip('button')}>
              {tip.gotItLabel ?? t('gotIt')}
            </Button>
          </Group>
        </Group>
      </Paper>
    </Box>
  );
}
