import { Button } from '@mantine/core';
import { INTERVALS } from '@skyferry/contract';
import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/utils.tsx';
import { MessageHost } from './MessageHost.tsx';
import { bannerVisible, localDay, qrPanelVisible, questionnaireVisible } from './rules.ts';
import { confirm, messagesStore, showError, showReauthorize, withLoading } from './store.ts';
import { toast } from './toast.ts';

beforeEach(() => messagesStore.setState({ dialogs: [], loading: 0 }));
afterEach(() => vi.useRealTimers());

describe('generic confirm', () => {
  it('resolves yes, no, or the optional third button, and returns focus to where it was', async () => {
    renderWithProviders(
      <>
        <Button onClick={() => void confirm({ message: 'Sure?' })}>Open</Button>
        <MessageHost />
      </>,
    );
    const opener = screen.getByRole('button', { name: 'Open' });
    opener.focus();
    let answer = confirm({ message: 'Are you sure to delete the task?' });
    expect(await screen.findByText('Are you sure to delete the task?')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Other' })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Yes' }));
    await expect(answer).resolves.toBe('yes');

    answer = confirm({ message: 'Again?' });
    // The next dialog shows once the previous one has closed.
    await screen.findByText('Again?');
    await userEvent.click(screen.getByRole('button', { name: 'No' }));
    await expect(answer).resolves.toBe('no');

    answer = confirm({ message: 'Which?', thirdLabel: 'Other' });
    await screen.findByText('Which?');
    await userEvent.click(screen.getByRole('button', { name: 'Other' }));
    await expect(answer).resolves.toBe('third');

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await userEvent.click(opener);
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toContainElement(document.activeElement as HTMLElement);
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await waitFor(() => expect(document.activeElement).toBe(opener));
  });

  it('the error variant has one button', async () => {
    renderWithProviders(<MessageHost />);
    const done = showError({ message: 'Cloud Drive operation error! [502001]' });
    expect(await screen.findByText('Cloud Drive operation error! [502001]')).toBeInTheDocument();
    const dialog = screen.getByRole('dialog');
    const buttons = [...dialog.querySelectorAll('button')].filter((b) => b.textContent);
    expect(buttons.map((b) => b.textContent)).toEqual(['OK']);
    await userEvent.click(buttons[0]!);
    await expect(done).resolves.toBeUndefined();
  });

  it('the re-authorisation modal says the authorisation expired and offers Reauthorize', async () => {
    renderWithProviders(<MessageHost />);
    const answer = showReauthorize({ cloudName: 'Team NAS' });
    expect(await screen.findByText('Authorization has expired, please reauthorize.')).toBeInTheDocument();
    expect(screen.getByText('Reauthorize Team NAS')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Reauthorize' }));
    await expect(answer).resolves.toBe(true);
  });

  it('shows the global loading overlay while a blocking call runs', async () => {
    renderWithProviders(<MessageHost />);
    let finish = () => undefined as void;
    const work = withLoading(new Promise<void>((r) => (finish = r)));
    expect(await screen.findByTestId('global-loading')).toBeInTheDocument();
    act(() => finish());
    await work;
    await waitFor(() => expect(screen.queryByTestId('global-loading')).not.toBeInTheDocument());
  });
});

describe('toasts', () => {
  it('close themselves after 3 s', async () => {
    vi.useFakeTimers();
    renderWithProviders(<div />);
    act(() => void toast.success('Settings saved.'));
    await act(() => vi.advanceTimersByTimeAsync(50));
    expect(screen.getByText('Settings saved.')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(INTERVALS.toast - 200));
    expect(screen.getByText('Settings saved.')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(1500));
    expect(screen.queryByText('Settings saved.')).not.toBeInTheDocument();
  });
});

describe('overlay rules', () => {
  it('the banner box, once closed, stays hidden for the rest of the day and returns the next day', () => {
    const evening = new Date(2025, 4, 10, 21, 0);
    expect(bannerVisible(null, evening)).toBe(true);
    const closedOn = localDay(evening);
    expect(bannerVisible(closedOn, new Date(2025, 4, 10, 23, 59))).toBe(false);
    expect(bannerVisible(closedOn, new Date(2025, 4, 11, 0, 1))).toBe(true);
  });

  it('the QR panel stays hidden for 24 hours after it is closed', () => {
    const closed = Date.UTC(2025, 0, 1, 12);
    expect(qrPanelVisible(null, closed)).toBe(true);
    expect(qrPanelVisible(closed, closed + INTERVALS.qrPanelHidden - 1)).toBe(false);
    expect(qrPanelVisible(closed, closed + INTERVALS.qrPanelHidden)).toBe(true);
  });

  it('the questionnaire prompt shows until clicked once, and only with billing on', () => {
    expect(questionnaireVisible(false, true)).toBe(true);
    expect(questionnaireVisible(true, true)).toBe(false);
    expect(questionnaireVisible(false, false)).toBe(false);
  });
});

describe('overlay components', () => {
  it('closing the QR panel hides it and remembers when', async () => {
    const { QrPanel } = await import('./QrPanel.tsx');
    renderWithProviders(<QrPanel />);
    expect(screen.getByRole('img', { name: /QR code for/ })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Close the QR code' }));
    expect(screen.queryByTestId('qr-panel')).not.toBeInTheDocument();
    expect(Number(localStorage.getItem('skyferry.qr_closed_at'))).toBeGreaterThan(0);
  });
});
