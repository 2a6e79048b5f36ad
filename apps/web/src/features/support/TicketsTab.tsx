import { Alert, Badge, Button, Card, Group, Loader, Stack, Text } from '@mantine/core';
import { formatDateTime, type MyTicketsData, type Ticket } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { openFeedback } from '../shell/store.ts';
import { supportApi } from './api.ts';

const STATUS_COLOUR = { open: 'blue', answered: 'teal', closed: 'gray' } as const;

/** A ticket's status as a badge. */
export function TicketStatusBadge({ status }: { status: Ticket['status'] }) {
  const { t } = useTranslation('support');
  return (
    <Badge variant="light" color={STATUS_COLOUR[status]} data-testid="ticket-status">
      {t(`status.${status}`)}
    </Badge>
  );
}

/** Plain text as the sender or the operator wrote it: shown as text (React escapes it), line breaks kept. */
export function PlainText({ text, testId }: { text: string; testId?: string }) {
  return (
    <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }} data-testid={testId}>
      {text}
    </Text>
  );
}

/** Settings > Support (signed in): the user's messages to the operator and the answers. */
export function TicketsTab() {
  const { t } = useTranslation('support');
  const [data, setData] = useState<MyTicketsData | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    supportApi
      .mine()
      .then(setData)
      .catch((err: unknown) => setError(err instanceof Error && err.message ? err.message : t('mine.loadFailed')));
  }, [t]);
  if (error) return <Alert color="red">{error}</Alert>;
  if (!data) return <Loader size="sm" />;
  return (
    <Stack gap="md" data-testid="my-tickets">
      <Group justify="space-between">
        <Text fw={600}>{t('mine.title')}</Text>
        <Button variant="light" size="xs" onClick={openFeedback}>
          {t('mine.write')}
        </Button>
      </Group>
      {data.items.length === 0 && <Text size="sm">{t('mine.empty')}</Text>}
      {data.items.map((ticket) => (
        <Card key={ticket.id} withBorder padding="sm" data-testid="my-ticket">
          <Stack gap={6}>
            <Group justify="space-between" wrap="nowrap">
              <Text fw={600} size="sm" lineClamp={1}>
                {ticket.title}
              </Text>
              <TicketStatusBadge status={ticket.status} />
            </Group>
            <Text size="xs" c="dimmed">
              {formatDateTime(ticket.created_at)}
            </Text>
            <PlainText text={ticket.contents} />
            {ticket.replies.length === 0 ? (
              <Text size="xs" c="dimmed">
                {t('mine.noAnswer')}
              </Text>
            ) : (
              ticket.replies.map((r) => (
                <Card key={r.id} bg="var(--mantine-color-default-hover)" padding="xs" data-testid="ticket-reply">
                  <Text size="xs" c="dimmed">
                    {t('mine.answer')} · {formatDateTime(r.created_at)}
                  </Text>
                  <PlainText text={r.body} />
                </Card>
              ))
            )}
          </Stack>
        </Card>
      ))}
    </Stack>
  );
}
