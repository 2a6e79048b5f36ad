import { Alert, Button, Card, Group, Loader, SegmentedControl, Stack, Text, Textarea } from '@mantine/core';
import {
  SUPPORT_LIMITS,
  formatBytes,
  formatDateTime,
  type OperatorTicket,
  type OperatorTicketsData,
  type TicketStatus,
} from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { requestHeaders } from '../../api/client.ts';
import { toast } from '../messages/toast.ts';
import { inboxApi } from './api.ts';
import { PlainText, TicketStatusBadge } from './TicketsTab.tsx';

type Filter = TicketStatus | 'all';

/** Downloads a ticket's file with the operator's credentials (a plain link would carry none). */
async function download(ticketId: string, id: string, name: string): Promise<void> {
  const res = await fetch(
    `/api/operator/tickets/${encodeURIComponent(ticketId)}/attachments/${encodeURIComponent(id)}`,
    { headers: requestHeaders(), credentials: 'same-origin' },
  );
  if (!res.ok) throw new Error(res.statusText);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const errorText = (err: unknown, fallback: string) => (err instanceof Error && err.message ? err.message : fallback);

/** Settings > Inbox (operators only): feedback tickets by status; open one to read it and answer by e-mail. */
export function InboxTab() {
  const { t } = useTranslation('support');
  const [filter, setFilter] = useState<Filter>('open');
  const [data, setData] = useState<OperatorTicketsData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [openId, setOpenId] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setData(await inboxApi.list(filter === 'all' ? undefined : filter));
      setError(null);
    } catch (err) {
      setError(errorText(err, t('inbox.loadFailed')));
    }
  }, [filter, t]);
  useEffect(() => {
    if (!openId) void load();
  }, [load, openId]);

  if (openId) return <InboxTicket id={openId} onBack={() => setOpenId(null)} />;
  const counts = data?.counts;
  return (
    <Stack gap="md" data-testid="inbox">
      <SegmentedControl
        value={filter}
        onChange={(v) => setFilter(v as Filter)}
        data={(['open', 'answered', 'closed', 'all'] as const).map((s) => ({
          value: s,
          label: s === 'all' ? t('inbox.all') : `${t(`status.${s}`)}${counts ? ` (${counts[s]})` : ''}`,
        }))}
      />
      {error && <Alert color="red">{error}</Alert>}
      {!data && !error && <Loader size="sm" />}
      {data?.items.length === 0 && <Text size="sm">{t('inbox.empty')}</Text>}
      {data?.items.map((ticket) => (
        <Card
          key={ticket.id}
          withBorder
          padding="sm"
          component="button"
          type="button"
          onClick={() => setOpenId(ticket.id)}
          style={{ textAlign: 'start', cursor: 'pointer' }}
          data-testid="inbox-ticket"
        >
          <Group justify="space-between" wrap="nowrap">
            <Stack gap={2} style={{ minWidth: 0 }}>
              <Text fw={600} size="sm" lineClamp={1}>
                {ticket.title}
              </Text>
              <Text size="xs" c="dimmed" lineClamp={1}>
                {ticket.email} · {ticket.visitor ? t('inbox.visitor') : t('inbox.account')} ·{' '}
                {formatDateTime(ticket.created_at)}
              </Text>
            </Stack>
            <TicketStatusBadge status={ticket.status} />
          </Group>
        </Card>
      ))}
    </Stack>
  );
}

/** One ticket: what the sender wrote, the answers so far, a reply box, close or reopen. */
function InboxTicket({ id, onBack }: { id: string; onBack: () => void }) {
  const { t } = useTranslation('support');
  const [ticket, setTicket] = useState<OperatorTicket | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reply, setReply] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    inboxApi
      .get(id)
      .then(setTicket)
      .catch((err: unknown) => setError(errorText(err, t('inbox.loadFailed'))));
  }, [id, t]);

  const run = async (action: () => Promise<OperatorTicket>, done?: (t: OperatorTicket) => void) => {
    setBusy(true);
    try {
      const updated = await action();
      setTicket(updated);
      setError(null);
      done?.(updated);
    } catch (err) {
      setError(errorText(err, t('inbox.loadFailed')));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Stack gap="sm" data-testid="inbox-detail">
      <Group>
        <Button variant="subtle" size="xs" onClick={onBack}>
          {t('inbox.back')}
        </Button>
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      {!ticket && !error && <Loader size="sm" />}
      {ticket && (
        <>
          <Group justify="space-between" wrap="nowrap">
            <Text fw={600} data-testid="inbox-title">
              {ticket.title}
            </Text>
            <TicketStatusBadge status={ticket.status} />
          </Group>
          <Text size="xs" c="dimmed">
            {t('inbox.from')}: {ticket.name ? `${ticket.name} <${ticket.email}>` : ticket.email} (
            {ticket.visitor ? t('inbox.visitor') : t('inbox.account')}) ·{' '}
            {t('inbox.sent', { date: formatDateTime(ticket.created_at) })}
          </Text>
          <Text size="xs" c="dimmed">
            {t('inbox.details', {
              platform: ticket.platform || '-',
              version: ticket.product_version || '-',
              language: ticket.language,
            })}
          </Text>
          <Card withBorder padding="sm">
            <PlainText text={ticket.contents} testId="inbox-contents" />
          </Card>
          {ticket.attachments.length > 0 && (
            <Group gap="xs" data-testid="inbox-attachments">
              {ticket.attachments.map((a) => (
                <Button
                  key={a.id}
                  variant="light"
                  size="compact-xs"
                  onClick={() =>
                    void download(ticket.id, a.id, a.file_name).catch((err: unknown) =>
                      setError(errorText(err, t('inbox.loadFailed'))),
                    )
                  }
                >
                  {t('inbox.file', { name: a.file_name, size: formatBytes(a.size) })}
                </Button>
              ))}
            </Group>
          )}
          {ticket.replies.map((r) => (
            <Card key={r.id} bg="var(--mantine-color-default-hover)" padding="xs" data-testid="inbox-reply">
              <Text size="xs" c="dimmed">
                {formatDateTime(r.created_at)}
              </Text>
              <PlainText text={r.body} />
            </Card>
          ))}
          <Textarea
            label={t('inbox.reply')}
            placeholder={t('inbox.replyPlaceholder')}
            rows={3}
            maxLength={SUPPORT_LIMITS.reply}
            value={reply}
            onChange={(e) => setReply(e.currentTarget.value)}
            data-testid="inbox-reply-text"
          />
          <Group justify="space-between">
            <Button
              variant="default"
              disabled={busy}
              onClick={() => void run(() => inboxApi.setStatus(id, ticket.status === 'closed' ? 'open' : 'closed'))}
            >
              {ticket.status === 'closed' ? t('inbox.reopen') : t('inbox.close')}
            </Button>
            <Button
              disabled={busy || reply.trim() === ''}
              onClick={() =>
                void run(
                  () => inboxApi.reply(id, reply),
                  (updated) => {
                    setReply('');
                    toast.success(t('inbox.replySent', { email: updated.email }));
                  },
                )
              }
              data-testid="inbox-send"
            >
              {t('inbox.send')}
            </Button>
          </Group>
        </>
      )}
    </Stack>
  );
}
