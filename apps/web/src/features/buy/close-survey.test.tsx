import { act, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/utils.tsx';
import { CloseSurvey } from './CloseSurvey.tsx';
import { SURVEY_LOAD_TIMEOUT_MS, closeSurveyAllowed, closeWithSurvey, finishCloseSurvey } from './close-survey.ts';

const DAY = 86_400_000;
const facts = { paid: true, hasClouds: true, usedTransfer: false };

describe('survey on client close (ST-SURV)', () => {
  it('interval_day below 0 means always; otherwise the last showing must be older than interval_day days', () => {
    const now = Date.UTC(2026, 0, 31);
    expect(closeSurveyAllowed({ interval_day: -1, condition_index_list: [] }, now - 1000, now, facts)).toBe(true);
    expect(closeSurveyAllowed({ interval_day: 30, condition_index_list: [] }, null, now, facts)).toBe(true);
    expect(closeSurveyAllowed({ interval_day: 30, condition_index_list: [] }, now - 29 * DAY, now, facts)).toBe(false);
    expect(closeSurveyAllowed({ interval_day: 30, condition_index_list: [] }, now - 31 * DAY, now, facts)).toBe(true);
    expect(closeSurveyAllowed(undefined, null, now, facts)).toBe(false);
  });

  it('conditions by index: 0 paid, 1 has clouds, 2 has used migrate or sync', () => {
    const rules = (list: number[]) => ({ interval_day: -1, condition_index_list: list });
    expect(closeSurveyAllowed(rules([0, 1]), null, 0, facts)).toBe(true);
    expect(closeSurveyAllowed(rules([0]), null, 0, { ...facts, paid: false })).toBe(false);
    expect(closeSurveyAllowed(rules([1]), null, 0, { ...facts, hasClouds: false })).toBe(false);
    expect(closeSurveyAllowed(rules([2]), null, 0, facts)).toBe(false);
    expect(closeSurveyAllowed(rules([2]), null, 0, { ...facts, usedTransfer: true })).toBe(true);
  });

  describe('the frame', () => {
    beforeEach(() => vi.useFakeTimers({ shouldAdvanceTime: true }));
    afterEach(() => {
      act(() => finishCloseSurvey());
      vi.useRealTimers();
    });

    it('shows only after it loads; closing it closes the window', async () => {
      const close = vi.fn();
      renderWithProviders(<CloseSurvey />);
      act(() => closeWithSurvey(true, close));
      const frame = screen.getByTestId('close-survey-frame');
      expect(frame).not.toBeVisible();
      expect(frame.getAttribute('src')).toBe('/survey');
      fireEvent.load(frame);
      await act(() => vi.advanceTimersByTimeAsync(400));
      expect(screen.getByTestId('close-survey-frame')).toBeVisible();
      await act(() => vi.advanceTimersByTimeAsync(SURVEY_LOAD_TIMEOUT_MS + 100));
      expect(close).not.toHaveBeenCalled();
      act(() => finishCloseSurvey());
      expect(close).toHaveBeenCalledTimes(1);
    });

    it('is given up (and the window closes) when it has not loaded within 5 s', async () => {
      const close = vi.fn();
      renderWithProviders(<CloseSurvey />);
      act(() => closeWithSurvey(true, close));
      await act(() => vi.advanceTimersByTimeAsync(SURVEY_LOAD_TIMEOUT_MS - 100));
      expect(close).not.toHaveBeenCalled();
      await act(() => vi.advanceTimersByTimeAsync(200));
      expect(close).toHaveBeenCalledTimes(1);
      expect(screen.queryByTestId('close-survey-frame')).toBeNull();
    });

    it('closes at once when the rules do not allow it', () => {
      const close = vi.fn();
      renderWithProviders(<CloseSurvey />);
      act(() => closeWithSurvey(false, close));
      expect(close).toHaveBeenCalledTimes(1);
      expect(screen.queryByTestId('close-survey-frame')).toBeNull();
    });
  });
});
