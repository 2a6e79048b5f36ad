import { Alert, Button, Checkbox, Group, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { refreshMe } from '../session/actions.ts';
import { sessionApi } from '../session/api.ts';
import { useSession } from '../session/store.ts';

/**
 * Notification (logged in only): an e-mail reminder when a transfer ends. Save is enabled only when
 * the e-mail is not empty; the server's message on failure is the e-mail's error until it changes.
 */
export function NotificationTab() {
  const { t } = useTranslation('settings');
  const info = useSession((s) => s.user.info);
  const mailDelivery = useSession((s) => s.init?.mail_delivery ?? true);
  const [email, setEmail] = useState(info?.notify_email || info?.email || '');
  const [remind, setRemind] = useState(info?.remind_me === 1);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const save = async () => {
    setSaving(true);
    try {
      const { msg } = await sessionApi.notifyEmail(email.trim(), remind ? 1 : 0);
      setNotice(msg || t('notification.saved'));
      await refreshMe().catch(() => undefined);
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : t('notification.failed'));
    } finally {
      setSaving(false);
    }
  };
  return (
    <Stack gap="md" maw={420}>
      <Text size="sm" c="dimmed">
        {t('notification.intro')}
      </Text>
      {!mailDelivery && (
        <Alert color="yellow" variant="light" data-testid="notify-no-mail">
          {t('notification.noMail')}
        </Alert>
      )}
      <Checkbox
        label={t('notification.remind')}
        checked={remind}
        onChange={(e) => setRemind(e.currentTarget.checked)}
      />
      <TextInput
        label={t('notification.email')}
        type="email"
        autoComplete="email"
        value={email}
        required
        error={error}
        onChange={(e) => {
          setEmail(e.currentTarget.value);
          setError(null);
          setNotice(null);
        }}
      />
      {notice && (
        <Text size="sm" c="teal.9" role="status" mt={-8} data-testid="notify-message">
          {notice}
        </Text>
      )}
      <Group>
        <Button onClick={() => void save()} disabled={email.trim() === ''} loading={saving}>
          {t('notification.save')}
        </Button>
      </Group>
    </Stack>
  );
}
