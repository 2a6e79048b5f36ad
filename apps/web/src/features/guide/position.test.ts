import { TIP } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { TIP_GAP, layoutTip, tipMaxWidth } from './position.ts';

const viewport = { width: 1280, height: 800 };
const tip = { width: 288, height: 100 };

describe('tip layout', () => {
  it('highlights the element with 4 px above and below and 8 px left and right', () => {
    const l = layoutTip({ top: 100, left: 200, width: 40, height: 30 }, tip, viewport);
    expect(l.highlight).toEqual({ top: 96, left: 192, width: 56, height: 38 });
    expect(TIP.highlightRadius).toBe(8);
  });

  it('sits below the element by default', () => {
    const l = layoutTip({ top: 100, left: 200, width: 40, height: 30 }, tip, viewport);
    expect(l.placement).toBe('below');
    expect(l.top).toBe(96 + 38 + TIP_GAP);
    expect(l.left).toBe(192);
  });

  it('flips above when its bottom would pass 95 % of the window height', () => {
    // Highlight bottom 642 + gap 8 + 100 = 750 <= 760 (95 % of 800): below.
    const fits = layoutTip({ top: 608, left: 10, width: 40, height: 30 }, tip, viewport);
    expect(fits.placement).toBe('below');
    // One pixel lower passes 760: above, ending 8 px over the highlight.
    const flips = layoutTip({ top: 619, left: 10, width: 40, height: 30 }, tip, viewport);
    expect(flips.placement).toBe('above');
    expect(flips.top).toBe(615 - TIP_GAP - 100);
  });

  it('stays inside the window horizontally, and aligns to the right edge in right-to-left layouts', () => {
    const right = layoutTip({ top: 10, left: 1250, width: 20, height: 20 }, tip, viewport);
    expect(right.left).toBe(1280 - 288 - TIP_GAP);
    const rtl = layoutTip({ top: 10, left: 900, width: 100, height: 20 }, tip, viewport, true);
    expect(rtl.left + tip.width).toBe(900 + 100 + 8);
  });

  it('widths: mini 200 px, small 288 px', () => {
    expect(tipMaxWidth('mini')).toBe(200);
    expect(tipMaxWidth('small')).toBe(288);
  });
});
