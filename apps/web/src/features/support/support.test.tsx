import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, type OperatorTicket, type SupportFormData } from '@skyferry/contract';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { Fail, authData, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { applyAuth } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { patchSettings, resetSessionStore, sessionStore } from '../session/store.ts';
import { FeedbackDialog } from './FeedbackDialog.tsx';
import { InboxTab } from './InboxTab.tsx';
import { TicketsTab } from './TicketsTab.tsx';
import { UpdateWatcher, VERSION_POLL_MS } from './WhatsNew.tsx';

configureSessionClient();

const TAGGER_FORM: SupportFormData = {
  ticket_form_id: 1,
  custom_fields: [
    {
      id: 1,
      type: 'tagger',
      title: 'Problem type',
      required: true,
      custom_field_options: [
        { value: 'transfer', name: 'Migrating or syncing' },
        { value: 'bug', name: 'Something does not work' },
      ],
    },
  ],
};

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData() });
  patchSettings({ temp_token: 'sk_vt_1' });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** The dialog, open, with a close handler that closes it as the shell does. */
function renderDialog() {
  renderWithProviders(<FeedbackDialog opened onClose={() => {}} />);
}

describe('Feedback dialog', () => {
  it('a visitor gets a temporary token first, then the form, with channel 3, language, product and version', async () => {
    patchSettings({ temp_token: '' });
    const api = mockApi({
      'GET /api/token': () => ({ token_type: 'Bearer', access_token: 'sk_vt_fresh', expires_in: 0 }),
      'GET /v1/support/forms/dynamic': () => TAGGER_FORM,
    });
    renderDialog();
    expect(screen.getByTestId('feedback-loading')).toHaveTextContent('Loading the form…');
    expect(await screen.findByTestId('feedback-form')).toBeInTheDocument();
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/token', 'GET /v1/support/forms/dynamic']);
    const form = api.find('GET /v1/support/forms/dynamic')[0];
    expect(form?.headers['x-temp-authorization']).toBe('sk_vt_fresh');
    expect(Object.fromEntries(form?.query ?? [])).toMatchObject({ channel: '3', lang: 'en' });
    expect(form?.query.get('product_id')).toMatch(/^\d+$/);
    expect(form?.query.get('version')).toBeTruthy();
  });

  it('names every empty field; editing a field clears its error; a tagger form needs a problem type', async () => {
    const api = mockApi({ 'GET /v1/support/forms/dynamic': () => TAGGER_FORM });
    renderDialog();
    await userEvent.click(await screen.findByRole('button', { name: 'Submit' }));
    expect(screen.getByText('Email cannot be empty')).toBeInTheDocument();
    expect(screen.getByText('Problem type cannot be empty')).toBeInTheDocument();
    expect(screen.getByText('Details cannot be empty')).toBeInTheDocument();
    expect(api.find('POST /v1/support/tickets')).toHaveLength(0);
    await userEvent.type(screen.getByTestId('feedback-email'), 'a');
    expect(screen.queryByText('Email cannot be empty')).not.toBeInTheDocument();
    expect(screen.getByText('Details cannot be empty')).toBeInTheDocument();
  });

  it('a form without a tagger sends without a problem type; "Loading..." while sending; closed and cleared after', async () => {
    let release: () => void = () => {};
    const api = mockApi({
      'GET /v1/support/forms/dynamic': () => ({ ticket_form_id: 1, custom_fields: [] }),
      'POST /v1/support/tickets': () =>
        new Promise((resolve) => {
          release = () => resolve({ id: 't1', status: 'open' });
        }),
    });
    function Harness() {
      const [opened, setOpened] = useState(true);
      return (
        <>
          <button type="button" onClick={() => setOpened(true)}>
            reopen
          </button>
          <FeedbackDialog opened={opened} onClose={() => setOpened(false)} />
        </>
      );
    }
    renderWithProviders(<Harness />);
    await userEvent.type(await screen.findByTestId('feedback-email'), 'me@example.com');
    await userEvent.type(screen.getByTestId('feedback-details'), 'It works <b>well</b>');
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByRole('button', { name: 'Loading...' })).toBeDisabled();
    act(() => release());
    await waitFor(() => expect(screen.queryByTestId('feedback-form')).not.toBeInTheDocument());
    const sent = api.find('POST /v1/support/tickets')[0];
    expect(sent?.body).toMatchObject({
      email: 'me@example.com',
      contents: 'It works <b>well</b>',
      ticket_form_id: 1,
      via: { channel: 3 },
    });
    expect(sent?.body).not.toHaveProperty('custom_fields');
    expect(sent?.query.get('channel')).toBe('3');
    // Reopened, it is empty.
    await userEvent.click(screen.getByRole('button', { name: 'reopen', hidden: true }));
    expect(await screen.findByTestId('feedback-email')).toHaveValue('');
    expect(screen.getByTestId('feedback-details')).toHaveValue('');
  });

  it('shows 312212 under the e-mail field and other refusals as the server’s message', async () => {
    let answer: unknown = new Fail(Code.EMAIL_FORMAT, 'Email format error.', 400, {
      fields: { email: 'Email format error.' },
    });
    mockApi({
      'GET /v1/support/forms/dynamic': () => ({ ticket_form_id: 1, custom_fields: [] }),
      'POST /v1/support/tickets': () => answer,
    });
    renderDialog();
    await userEvent.type(await screen.findByTestId('feedback-email'), 'not-an-address');
    await userEvent.type(screen.getByTestId('feedback-details'), 'details');
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText('Email format error.')).toBeInTheDocument();
    expect(screen.getByTestId('feedback-email')).toHaveAttribute('aria-invalid', 'true');
    answer = new Fail(Code.RATE_LIMITED, 'Too many requests, please try again later.', 429);
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByTestId('feedback-error')).toHaveTextContent('Too many requests, please try again later.');
    await userEvent.type(screen.getByTestId('feedback-details'), '!');
    expect(screen.queryByTestId('feedback-error')).not.toBeInTheDocument();
  });

  it('attaches a log file as base64 and refuses a file of another type before sending', async () => {
    const api = mockApi({
      'GET /v1/support/forms/dynamic': () => ({ ticket_form_id: 1, custom_fields: [] }),
      'POST /v1/support/tickets': () => ({ id: 't1', status: 'open' }),
    });
    renderDialog();
    await userEvent.type(await screen.findByTestId('feedback-email'), 'me@example.com');
    await userEvent.type(screen.getByTestId('feedback-details'), 'details');
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    await userEvent.upload(input, new File(['MZ'], 'tool.exe', { type: 'application/octet-stream' }), {
      applyAccept: false,
    });
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText(/tool\.exe cannot be attached/)).toBeInTheDocument();
    expect(api.find('POST /v1/support/tickets')).toHaveLength(0);
    await userEvent.upload(input, new File(['error: sync stopped'], 'skyferry.log', { type: 'text/plain' }));
    await userEvent.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(api.find('POST /v1/support/tickets')).toHaveLength(1));
    expect(api.find('POST /v1/support/tickets')[0]?.body).toMatchObject({
      attachments: [{ file_name: 'skyferry.log', content_type: 'text/plain', data: btoa('error: sync stopped') }],
    });
  });

  it('a signed-in user makes no /api/token call and sends their own token', async () => {
    applyAuth(authData());
    patchSettings({ temp_token: '' });
    const api = mockApi({ 'GET /v1/support/forms/dynamic': () => TAGGER_FORM });
    renderDialog();
    await screen.findByTestId('feedback-form');
    expect(api.find('GET /api/token')).toHaveLength(0);
    expect(api.find('GET /v1/support/forms/dynamic')[0]?.headers.authorization).toBe('Bearer access-1');
  });
});

const ticket = (over: Partial<OperatorTicket> = {}): OperatorTicket => ({
  id: 't1',
  title: 'Sync <stops>',
  contents: '<img src=x onerror=alert(1)>\nsecond line',
  email: 'ana@example.com',
  problem_type: 'transfer',
  status: 'open',
  created_at: 1_700_000_000_000,
  updated_at: 1_700_000_000_000,
  replies: [],
  name: 'Ana',
  uid: null,
  visitor: true,
  language: 'en',
  platform: 'web',
  product_version: '1.7.8',
  attachments: [],
  ...over,
});

describe('operator inbox and the user’s messages', () => {
  it('lists tickets by status, opens one shown as text, and answers it', async () => {
    const api = mockApi({
      'GET /api/operator/tickets': () => ({
        items: [ticket()],
        total: 1,
        counts: { open: 1, answered: 0, closed: 0 },
      }),
      'GET /api/operator/tickets/t1': () => ticket(),
      'POST /api/operator/tickets/t1/reply': (call) =>
        ticket({
          status: 'answered',
          replies: [{ id: 'r1', body: (call.body as { body: string }).body, created_at: 1_700_000_100_000 }],
        }),
    });
    const { container } = renderWithProviders(<InboxTab />);
    expect(await screen.findByRole('radio', { name: 'Open (1)' })).toBeChecked();
    expect(api.find('GET /api/operator/tickets')[0]?.query.get('status')).toBe('open');
    await userEvent.click(await screen.findByTestId('inbox-ticket'));
    expect(await screen.findByTestId('inbox-contents')).toHaveTextContent('<img src=x onerror=alert(1)>');
    expect(container.ownerDocument.querySelector('img[src="x"]')).toBeNull();
    expect(screen.getByTestId('inbox-title')).toHaveTextContent('Sync <stops>');
    await userEvent.type(screen.getByTestId('inbox-reply-text'), 'Try again now');
    await userEvent.click(screen.getByTestId('inbox-send'));
    expect(await screen.findByTestId('inbox-reply')).toHaveTextContent('Try again now');
    expect(api.find('POST /api/operator/tickets/t1/reply')[0]?.body).toEqual({ body: 'Try again now' });
    expect(screen.getByTestId('ticket-status')).toHaveTextContent('Answered');
  });

  it('shows the user their messages with the operator’s answers', async () => {
    mockApi({
      'GET /api/support/tickets': () => ({
        items: [
          ticket({
            status: 'answered',
            replies: [{ id: 'r1', body: 'Reconnect the drive', created_at: 1_700_000_100_000 }],
          }),
        ],
      }),
    });
    renderWithProviders(<TicketsTab />);
    expect(await screen.findByTestId('ticket-reply')).toHaveTextContent('Reconnect the drive');
    expect(screen.getByTestId('my-ticket')).toHaveTextContent('Sync <stops>');
  });
});

describe('a newer server version', () => {
  beforeEach(() => sessionStore.setState({ started: true }));

  const answer = (latest: string) => ({
    version: latest,
    latest,
    release_date: null,
    whats_new_content: `- New in ${latest}\n- <b>bold</b> stays text`,
  });

  it('asks nothing before start-up (the error page and sign-in callbacks skip it)', async () => {
    sessionStore.setState({ started: false });
    const api = mockApi({ 'GET /api/version/current': () => answer('0.1.0') });
    renderWithProviders(<UpdateWatcher />);
    await act(async () => {
      await new Promise((r) => setTimeout(r, 50));
    });
    expect(api.calls).toEqual([]);
  });

  it('offers to reload when the server moves on after the page loaded', async () => {
    let latest = '0.1.0';
    vi.useFakeTimers({ shouldAdvanceTime: true });
    mockApi({ 'GET /api/version/current': () => answer(latest) });
    renderWithProviders(<UpdateWatcher />);
    await waitFor(() => expect(localStorage.getItem(STORAGE_KEYS.whatsNewSeen)).toBe('"0.1.0"'));
    // A first visit shows no release notes.
    expect(screen.queryByTestId('whats-new-content')).not.toBeInTheDocument();
    latest = '0.2.0';
    await act(async () => {
      await vi.advanceTimersByTimeAsync(VERSION_POLL_MS);
    });
    expect(await screen.findByTestId('update-available')).toHaveTextContent('A new version of Skyferry is available');
    expect(screen.getByRole('button', { name: 'Reload' })).toBeInTheDocument();
  });

  it('shows what is new once after the page loads onto a newer version', async () => {
    localStorage.setItem(STORAGE_KEYS.whatsNewSeen, '"0.1.0"');
    mockApi({ 'GET /api/version/current': () => answer('0.2.0') });
    const first = renderWithProviders(<UpdateWatcher />);
    expect(await screen.findByText("What's new in version 0.2.0")).toBeInTheDocument();
    expect(screen.getByTestId('whats-new-content')).toHaveTextContent('<b>bold</b> stays text');
    first.unmount();
    renderWithProviders(<UpdateWatcher />);
    await waitFor(() => expect(localStorage.getItem(STORAGE_KEYS.whatsNewSeen)).toBe('"0.2.0"'));
    expect(screen.queryByText("What's new in version 0.2.0")).not.toBeInTheDocument();
  });
});
