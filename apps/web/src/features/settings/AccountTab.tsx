import {
  Alert,
  Badge,
  Button,
  Group,
  Loader,
  Modal,
  PasswordInput,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { Code, MIN_PASSWORD_LENGTH, type AccountSession } from '@skyferry/contract';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiRequestError } from '../../api/client.ts';
import { toast } from '../messages/toast.ts';
import { logout } from '../session/actions.ts';
import { useSession } from '../session/store.ts';
import { accountApi } from './api.ts';

const messageOf = (err: unknown, fallback: string) => (err instanceof Error && err.message ? err.message : fallback);
const codeOf = (err: unknown) => (err instanceof ApiRequestError ? err.code : 0);

/** A browser and system in a few words ("Firefox on Linux"), from a User-Agent; '' when neither is known. */
export function deviceName(userAgent: string): string {
  const browser =
    [
      [/Skyferry|Electron/, 'Skyferry desktop'],
      [/Edg\//, 'Edge'],
      [/OPR\/|Opera/, 'Opera'],
      [/Firefox\//, 'Firefox'],
      [/Chrom(e|ium)\//, 'Chrome'],
      [/Safari\//, 'Safari'],
    ].find(([re]) => (re as RegExp).test(userAgent))?.[1] ?? '';
  const system =
    [
      [/iPhone|iPad|iPod/, 'iOS'],
      [/Android/, 'Android'],
      [/Windows/, 'Windows'],
      [/Mac OS X|Macintosh/, 'macOS'],
      [/CrOS/, 'ChromeOS'],
      [/Linux|X11/, 'Linux'],
    ].find(([re]) => (re as RegExp).test(userAgent))?.[1] ?? '';
  if (browser && system) return `${browser as string} · ${system as string}`;
  return (browser || system) as string;
}

/**
 * Account (signed in only): the e-mail address (changed by a link mailed to the new one), the
 * password (other devices are signed out), the signed-in devices with sign-out, and deleting the
 * account.
 */
export function AccountTab() {
  const { t } = useTranslation('settings');
  const email = useSession((s) => s.user.email);
  return (
    <Stack gap="xl" maw={560}>
      <Stack gap="xs">
        <Title order={3} size="h5">
          {t('account.emailTitle')}
        </Title>
        <Text size="sm">
          {t('account.currentEmail')} <bdi data-testid="account-email">{email}</bdi>
        </Text>
        <ChangeEmailForm />
      </Stack>
      <Stack gap="xs">
        <Title order={3} size="h5">
          {t('account.passwordTitle')}
        </Title>
        <ChangePasswordForm />
      </Stack>
      <Sessions />
      <DeleteAccount />
    </Stack>
  );
}

function ChangeEmailForm() {
  const { t } = useTranslation('settings');
  const [newEmail, setNewEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<{ email?: string; password?: string; form?: string }>({});
  const [sent, setSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problems: typeof errors = {};
    if (newEmail.trim() === '') problems.email = t('account.emailRequired');
    if (password === '') problems.password = t('account.passwordRequired');
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    setSent(null);
    try {
      const { msg } = await accountApi.changeEmail(newEmail.trim(), password);
      setSent(msg);
      setPassword('');
    } catch (err) {
      const msg = messageOf(err, t('account.failed'));
      setErrors(codeOf(err) === Code.PASSWORD_INCORRECT ? { password: msg } : { email: msg });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate data-testid="change-email-form">
      <Stack gap="xs">
        <TextInput
          label={t('account.newEmail')}
          type="email"
          autoComplete="email"
          value={newEmail}
          error={errors.email}
          onChange={(e) => {
            setNewEmail(e.currentTarget.value);
            setErrors((x) => ({ ...x, email: undefined }));
          }}
        />
        <PasswordInput
          label={t('account.password')}
          autoComplete="current-password"
          value={password}
          error={errors.password}
          onChange={(e) => {
            setPassword(e.currentTarget.value);
            setErrors((x) => ({ ...x, password: undefined }));
          }}
        />
        {sent && (
          <Alert color="teal" variant="light" role="status" data-testid="email-change-sent">
            {sent}
          </Alert>
        )}
        <Group>
          <Button type="submit" variant="light" loading={busy}>
            {t('account.sendLink')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function ChangePasswordForm() {
  const { t } = useTranslation('settings');
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<{ current?: string; next?: string; confirm?: string }>({});
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // Every problem at once, each under its field.
    const problems: typeof errors = {};
    if (current === '') problems.current = t('account.passwordRequired');
    if (next.length < MIN_PASSWORD_LENGTH) problems.next = t('account.passwordTooShort', { min: MIN_PASSWORD_LENGTH });
    if (confirm !== next) problems.confirm = t('account.passwordsDiffer');
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    try {
      const { msg } = await accountApi.changePassword(current, next);
      toast.success(msg || t('account.passwordChanged'));
      setCurrent('');
      setNext('');
      setConfirm('');
    } catch (err) {
      const msg = messageOf(err, t('account.failed'));
      setErrors(codeOf(err) === Code.PASSWORD_INCORRECT ? { current: msg } : { next: msg });
    } finally {
      setBusy(false);
    }
  };
  const field = (key: keyof typeof errors, set: (v: string) => void) => ({
    error: errors[key],
    // Mantine marks a password field invalid only for styling: say it to assistive technology too.
    'aria-invalid': errors[key] ? true : undefined,
    onChange: (e: { currentTarget: { value: string } }) => {
      set(e.currentTarget.value);
      setErrors((x) => ({ ...x, [key]: undefined }));
    },
  });
  return (
    <form onSubmit={(e) => void submit(e)} noValidate data-testid="change-password-form">
      <Stack gap="xs">
        <PasswordInput
          label={t('account.currentPassword')}
          autoComplete="current-password"
          value={current}
          {...field('current', setCurrent)}
        />
        <PasswordInput
          label={t('account.newPassword')}
          description={t('account.passwordHint', { min: MIN_PASSWORD_LENGTH })}
          autoComplete="new-password"
          value={next}
          {...field('next', setNext)}
        />
        <PasswordInput
          label={t('account.confirmPassword')}
          autoComplete="new-password"
          value={confirm}
          {...field('confirm', setConfirm)}
        />
        <Text size="xs" c="dimmed">
          {t('account.passwordOthersSignedOut')}
        </Text>
        <Group>
          <Button type="submit" variant="light" loading={busy}>
            {t('account.changePassword')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function Sessions() {
  const { t, i18n } = useTranslation('settings');
  const [items, setItems] = useState<AccountSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setItems((await accountApi.sessions()).items);
      setError(null);
    } catch (err) {
      setError(messageOf(err, t('account.sessionsFailed')));
    }
  }, [t]);
  useEffect(() => {
    void load();
  }, [load]);
  const when = (ms: number) =>
    new Intl.DateTimeFormat(i18n.language === 'br' ? 'pt-BR' : i18n.language, {
      dateStyle: 'medium',
      timeStyle: 'short',
    }).format(ms);
  const act = async (key: string, work: () => Promise<unknown>) => {
    setBusy(key);
    try {
      await work();
      await load();
    } catch (err) {
      setError(messageOf(err, t('account.failed')));
    } finally {
      setBusy(null);
    }
  };
  const others = (items ?? []).filter((s) => !s.current).length;
  return (
    <Stack gap="xs">
      <Title order={3} size="h5">
        {t('account.sessionsTitle')}
      </Title>
      <Text size="sm" c="dimmed">
        {t('account.sessionsIntro')}
      </Text>
      {error && (
        <Alert color="red" variant="light">
          {error}
        </Alert>
      )}
      {!items && !error && <Loader size="sm" />}
      {items && (
        <Table.ScrollContainer minWidth={480}>
          <Table data-testid="sessions-table" verticalSpacing={6}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">{t('account.device')}</Table.Th>
                <Table.Th scope="col">{t('account.address')}</Table.Th>
                <Table.Th scope="col">{t('account.signedInAt')}</Table.Th>
                <Table.Th scope="col">{t('account.lastUsed')}</Table.Th>
                <Table.Th scope="col">
                  <VisuallyHidden>{t('account.actions')}</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((s) => (
                <Table.Tr key={s.id} data-testid="session-row" data-current={s.current || undefined}>
                  <Table.Td title={s.user_agent}>
                    <Text size="sm">{deviceName(s.user_agent) || t('account.unknownDevice')}</Text>
                    {s.current && (
                      <Badge size="xs" variant="light">
                        {t('account.thisDevice')}
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <bdi>{s.ip || '—'}</bdi>
                  </Table.Td>
                  <Table.Td>{when(s.created_at)}</Table.Td>
                  <Table.Td>{when(s.last_used_at)}</Table.Td>
                  <Table.Td>
                    {!s.current && (
                      <Button
                        size="compact-xs"
                        variant="subtle"
                        color="red"
                        loading={busy === s.id}
                        onClick={() => void act(s.id, () => accountApi.revokeSession(s.id))}
                      >
                        {t('account.signOutDevice')}
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {others > 0 && (
        <Group>
          <Button
            variant="default"
            size="xs"
            loading={busy === 'others'}
            onClick={() =>
              void act('others', async () => {
                const { ended } = await accountApi.revokeOtherSessions();
                toast.success(t('account.othersSignedOut', { count: ended }));
              })
            }
          >
            {t('account.signOutOthers')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function DeleteAccount() {
  const { t } = useTranslation('settings');
  const operator = useSession((s) => s.user.info?.role === 'operator');
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const [successor, setSuccessor] = useState('');
  const [errors, setErrors] = useState<{ password?: string; successor?: string }>({});
  const [busy, setBusy] = useState(false);
  const close = () => {
    setOpen(false);
    setPassword('');
    setErrors({});
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password === '') {
      setErrors({ password: t('account.passwordRequired') });
      return;
    }
    setBusy(true);
    try {
      const { msg } = await accountApi.deleteAccount(password, successor.trim() || undefined);
      setOpen(false);
      toast.success(msg || t('account.deleted'));
      await logout();
    } catch (err) {
      const msg = messageOf(err, t('account.failed'));
      const code = codeOf(err);
      setErrors(
        code === Code.PASSWORD_INCORRECT || code === Code.RATE_LIMITED ? { password: msg } : { successor: msg },
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <Stack gap="xs">
      <Title order={3} size="h5" c="red.8">
        {t('account.deleteTitle')}
      </Title>
      <Text size="sm">{t('account.deleteIntro')}</Text>
      <Group>
        <Button color="red" variant="outline" onClick={() => setOpen(true)} data-testid="delete-account">
          {t('account.deleteButton')}
        </Button>
      </Group>
      <Modal opened={open} onClose={close} title={t('account.deleteConfirmTitle')} centered>
        <form onSubmit={(e) => void submit(e)} noValidate>
          <Stack gap="sm">
            <Text size="sm">{t('account.deleteConfirm')}</Text>
            <PasswordInput
              label={t('account.password')}
              autoComplete="current-password"
              value={password}
              error={errors.password}
              data-autofocus
              onChange={(e) => {
                setPassword(e.currentTarget.value);
                setErrors((x) => ({ ...x, password: undefined }));
              }}
            />
            {operator && (
              <TextInput
                label={t('account.successor')}
                description={t('account.successorHint')}
                type="email"
                value={successor}
                error={errors.successor}
                onChange={(e) => {
                  setSuccessor(e.currentTarget.value);
                  setErrors((x) => ({ ...x, successor: undefined }));
                }}
              />
            )}
            {!operator && errors.successor && (
              <Alert color="red" variant="light">
                {errors.successor}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                {t('account.cancel')}
              </Button>
              <Button type="submit" color="red" loading={busy}>
                {t('account.deleteForever')}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </Stack>
  );
}
