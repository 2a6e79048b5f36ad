import { TIP } from '@skyferry/contract';

export interface Box {
  top: number;
  left: number;
  width: number;
  height: number;
}

export type TipPlacement = 'above' | 'below';

export interface TipLayout {
  placement: TipPlacement;
  /** The highlighted hole around the element: 4 px above and below, 8 px left and right. */
  highlight: Box;
  /** The tooltip panel's top-left corner. */
  top: number;
  left: number;
}

/** Gap between the highlight and the tooltip panel, and the minimum distance from the window edge. */
export const TIP_GAP = 8;

/** The tooltip's maximum width by size: mini 200 px, small 288 px. */
export function tipMaxWidth(size: 'mini' | 'small'): number {
  return size === 'mini' ? TIP.maxWidthMini : TIP.maxWidthSmall;
}

/**
 * Where the tooltip goes (spec sections 4 and 9): below the highlighted element, flipped above when
 * its bottom would pass 95 % of the window height. Horizontally it starts at the highlight's start
 * edge (the right edge in right-to-left layouts) and stays inside the window.
 */
export function layoutTip(
  target: Box,
  tip: { width: number; height: number },
  viewport: { width: number; height: number },
  rtl = false,
): TipLayout {
  const highlight: Box = {
    top: target.top - TIP.highlightPaddingY,
    left: target.left - TIP.highlightPaddingX,
    width: target.width + 2 * TIP.highlightPaddingX,
    height: target.height + 2 * TIP.highlightPaddingY,
  };
  const belowTop = highlight.top + highlight.height + TIP_GAP;
  const placement: TipPlacement = belowTop + tip.height > viewport.height * TIP.flipThreshold ? 'above' : 'below';
  const top = placement === 'below' ? belowTop : highlight.top - TIP_GAP - tip.height;
  const preferred = rtl ? highlight.left + highlight.width - tip.width : highlight.left;
  const maxLeft = Math.max(TIP_GAP, viewport.width - tip.width - TIP_GAP);
  const left = Math.min(Math.max(preferred, TIP_GAP), maxLeft);
  return { placement, highlight, top: Math.max(TIP_GAP, top), left };
}

export function sameLayout(a: TipLayout | null, b: TipLayout | null): boolean {
  if (!a || !b) return a === b;
  return (
    a.placement === b.placement &&
    a.top === b.top &&
    a.left === b.left &&
    a.highlight.top === b.highlight.top &&
    a.highlight.left === b.highlight.left &&
    a.highlight.width === b.highlight.width &&
    a.highlight.height === b.highlight.height
  );
}
