import { INTERVALS } from '@skyferry/contract';
import { act, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/utils.tsx';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { guideStore, isAcknowledged, showTips, type TipStep } from './store.ts';
import { TipOverlay } from './TipOverlay.tsx';

function target(id: string, rect: { top: number; left: number; width: number; height: number }) {
  const el = document.createElement('button');
  el.id = id;
  el.textContent = id;
  let r = rect;
  el.getBoundingClientRect = () =>
    ({ ...r, right: r.left + r.width, bottom: r.top + r.height, x: r.left, y: r.top, toJSON() {} }) as DOMRect;
  document.body.appendChild(el);
  return { el, move: (next: typeof rect) => (r = next) };
}

const steps = (overrides: Partial<TipStep>[] = []): TipStep[] =>
  ['one', 'two', 'three'].map((id, i) => ({
    id,
    target: `#${id}`,
    title: `Title ${id}`,
    content: `Text ${id}`,
    skip: true,
    ...overrides[i],
  }));

beforeEach(() => {
  vi.useFakeTimers();
  localStorage.clear();
  guideStore.setState({ acknowledged: {}, chain: null, pending: false });
  Object.defineProperty(window, 'innerHeight', { value: 800, configurable: true });
  Object.defineProperty(window, 'innerWidth', { value: 1280, configurable: true });
});
afterEach(() => {
  vi.useRealTimers();
  document.body.innerHTML = '';
});

describe('onboarding tip overlay', () => {
  it('is hidden until a chain is shown, then outlines the element without blocking the page', () => {
    target('one', { top: 100, left: 100, width: 50, height: 20 });
    const elsewhere = document.createElement('input');
    document.body.appendChild(elsewhere);
    elsewhere.focus();
    renderWithProviders(<TipOverlay />);
    expect(screen.queryByTestId('tip-overlay')).not.toBeInTheDocument();
    act(() => void showTips(steps().slice(0, 1)));
    // Nothing dims or covers the page, and the user's focus stays where it was.
    const overlay = screen.getByTestId('tip-overlay');
    expect(overlay.style.pointerEvents).toBe('none');
    const catching = [...overlay.querySelectorAll<HTMLElement>('*')].filter(
      (el) => el.style.pointerEvents === 'auto' && el.getAttribute('data-testid') !== 'tip-panel',
    );
    expect(catching).toEqual([]);
    expect(getComputedStyle(screen.getByTestId('tip-highlight')).boxShadow).not.toContain('9999px');
    expect(document.activeElement).toBe(elsewhere);
    expect(screen.getByRole('dialog')).toHaveAttribute('aria-modal', 'false');
    const highlight = screen.getByTestId('tip-highlight');
    expect(highlight.style.top).toBe('96px');
    expect(highlight.style.left).toBe('92px');
    expect(highlight.style.width).toBe('66px');
    expect(highlight.style.height).toBe('28px');
    expect(highlight.style.borderRadius).toBe('8px');
    const panel = screen.getByRole('dialog');
    expect(panel).toHaveAttribute('data-placement', 'below');
    expect(panel.style.maxWidth).toBe('288px');
    expect(screen.getByRole('button', { name: 'Got it' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Skip' })).toBeInTheDocument();
    expect(screen.getByTestId('tip-count')).toHaveTextContent('');
  });

  it('mini tips are at most 200 px wide; custom labels replace Got it and Skip', () => {
    target('one', { top: 100, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips([{ ...steps()[0]!, size: 'mini', gotItLabel: 'Nice', skipLabel: 'Later' }]));
    expect(screen.getByRole('dialog').style.maxWidth).toBe('200px');
    expect(screen.getByRole('button', { name: 'Nice' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Later' })).toBeInTheDocument();
  });

  it('chains with "n of m"; Got it acknowledges and moves on; an acknowledged tip never shows again', () => {
    target('one', { top: 100, left: 100, width: 50, height: 20 });
    target('two', { top: 200, left: 100, width: 50, height: 20 });
    target('three', { top: 300, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips(steps()));
    expect(screen.getByTestId('tip-count')).toHaveTextContent('1 of 3');
    fireEvent.click(screen.getByRole('button', { name: 'Got it' }));
    expect(isAcknowledged('one')).toBe(true);
    expect(screen.getByText('Text two')).toBeInTheDocument();
    expect(screen.getByTestId('tip-count')).toHaveTextContent('2 of 3');
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.guide) ?? '{}')).toEqual({ one: true });
    fireEvent.click(screen.getByRole('button', { name: 'Got it' }));
    fireEvent.click(screen.getByRole('button', { name: 'Got it' }));
    expect(screen.queryByTestId('tip-overlay')).not.toBeInTheDocument();
    let started = true;
    act(() => void (started = showTips(steps())));
    expect(started).toBe(false);
    expect(screen.queryByTestId('tip-overlay')).not.toBeInTheDocument();
  });

  it('Skip acknowledges the current, related and remaining tips and hides the overlay', () => {
    target('one', { top: 100, left: 100, width: 50, height: 20 });
    target('two', { top: 200, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips(steps([{}, { related: ['sync-1'] }])));
    fireEvent.click(screen.getByRole('button', { name: 'Got it' }));
    fireEvent.click(screen.getByRole('button', { name: 'Skip' }));
    expect(screen.queryByTestId('tip-overlay')).not.toBeInTheDocument();
    expect(['one', 'two', 'three', 'sync-1'].every(isAcknowledged)).toBe(true);
  });

  it('a click on the highlighted element acknowledges; a next tip of a view appears 300 ms later', async () => {
    const one = target('one', { top: 100, left: 100, width: 50, height: 20 });
    target('two', { top: 200, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips(steps([{}, { view: true }])));
    fireEvent.click(one.el);
    expect(isAcknowledged('one')).toBe(true);
    expect(screen.queryByText('Text two')).not.toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(INTERVALS.tipDelay - 1));
    expect(screen.queryByText('Text two')).not.toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(screen.getByText('Text two')).toBeInTheDocument();
  });

  it('Got it moves to a view tip at once (the delay is for clicks only)', () => {
    target('one', { top: 100, left: 100, width: 50, height: 20 });
    target('two', { top: 200, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips(steps([{}, { view: true }])));
    fireEvent.click(screen.getByRole('button', { name: 'Got it' }));
    expect(screen.getByText('Text two')).toBeInTheDocument();
  });

  it('re-checks the position every 60 ms and flips above near the bottom', async () => {
    const one = target('one', { top: 100, left: 100, width: 50, height: 20 });
    renderWithProviders(<TipOverlay />);
    act(() => void showTips(steps().slice(0, 1)));
    expect(screen.getByRole('dialog')).toHaveAttribute('data-placement', 'below');
    one.move({ top: 700, left: 100, width: 50, height: 20 });
    await act(() => vi.advanceTimersByTimeAsync(INTERVALS.tipPositionCheck - 1));
    expect(screen.getByTestId('tip-highlight').style.top).toBe('96px');
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(screen.getByTestId('tip-highlight').style.top).toBe('696px');
    expect(screen.getByRole('dialog')).toHaveAttribute('data-placement', 'above');
  });
});
