import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  Modal,
  NativeSelect,
  PasswordInput,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Textarea,
  UnstyledButton,
} from '@mantine/core';
import { IconArrowLeft, IconExternalLink } from '@tabler/icons-react';
import { useGuideSteps } from '../guide/steps.ts';
import { Code as ApiCode, LIMITS, OAUTH_CHANNEL, type SystemCloudKind } from '@skyferry/contract';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import type { DialogSlotProps } from '../../app/slot-types.ts';
import { toast } from '../messages/toast.ts';
import { loadClouds } from '../session/actions.ts';
import { selectBillingOn, selectPaid, selectVisibleClouds, sessionStore, useSession } from '../session/store.ts';
import { ApiRequestError } from '../../api/client.ts';
import { askUpgrade } from '../tasks/errors.ts';
import type { Cloud } from '../session/types.ts';
import { CloudIcon } from '../shell/CloudIcon.tsx';
import { availableFirst, cloudHref, kindName, markCloudUsed } from '../shell/clouds.ts';
import { desktopBridge } from '../shell/desktop.ts';
import { connectApi, isOAuthResult } from './api.ts';
import { credentialsOf, selectValue, validateConnectForm, type FieldError, type FieldValues } from './form.ts';

export interface ConnectCloudDialogProps extends DialogSlotProps {
  /** A kind to open on (the add-cloud tiles pass theirs). */
  kind: string | null;
  /** Reauthorize this cloud instead of connecting a new one. */
  reauthorize?: Cloud | null;
}

/** Example values (addresses and codes read the same in every language). */
const PLACEHOLDERS: Record<string, string> = {
  endpoint: 'https://s3.example.com',
  url: 'https://dav.example.com/remote.php/dav/files/me/',
  region: 'us-east-1',
  host: 'sftp.example.com',
};

/** The count that triggers the limit messages: the maximum, and the warning from 18. */
export function limitState(count: number): 'ok' | 'near' | 'reached' {
  if (count >= LIMITS.maxCloudDrives) return 'reached';
  if (count >= LIMITS.cloudWarningFrom) return 'near';
  return 'ok';
}

/**
 * Connect cloud drive: the kinds this server offers, those that can be connected first (the
 * unavailable ones last, greyed, with the server's reason in the user's language),
 * then the kind's form (object storage: Bucket Name, Access Key ID, Secret Access Key, and the
 * endpoint and region of S3-compatible stores; WebDAV, SFTP, FTP, a local folder) or its OAuth
 * sign-in window. Also reauthorizes an existing cloud.
 */
export function ConnectCloudDialog({ opened, onClose, kind, reauthorize: given }: ConnectCloudDialogProps) {
  const { t } = useTranslation('connect');
  const kinds = useSession((s) => s.systemClouds);
  // Opened on a kind that has an expired cloud (the sidebar's and the explorer's Reauthorize): reauthorize it.
  const expired = useSession((s) =>
    kind ? (selectVisibleClouds(s).find((c) => c.cloud_name === kind && c.status === 'expired') ?? null) : null,
  );
  const reauthorize = given ?? expired;
  const count = useSession((s) => selectVisibleClouds(s).length);
  const navigate = useNavigate();
  const [chosen, setChosen] = useState<string | null>(null);

  useEffect(() => {
    if (opened) setChosen(reauthorize?.cloud_name ?? kind);
  }, [opened, kind, reauthorize]);

  const selected = kinds.find((k) => k.cloud_name === chosen) ?? null;
  const limit = reauthorize ? 'ok' : limitState(count);
  // The user-guide step on the kind list, shown once while the list is on screen.
  useGuideSteps(['add-drive-selectone'], opened && !selected && kinds.length > 0);

  const done = async (cloud: Cloud | null) => {
    await loadClouds().catch(() => undefined);
    onClose();
    if (!cloud) return;
    toast.success(
      reauthorize ? t('reauthorized') : t('connected', { name: cloud.cloud_alias_name || cloud.cloud_account }),
    );
    if (reauthorize) return;
    const clouds = selectVisibleClouds(sessionStore.getState());
    const index = clouds.findIndex((c) => c.id === cloud.id);
    if (index >= 0) {
      markCloudUsed(cloud.id);
      navigate(cloudHref(cloud, index));
    }
  };

  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={reauthorize ? t('reauthorizeTitle') : t('title')}
      size="lg"
      centered
      data-testid="connect-dialog"
    >
      {limit === 'reached' && (
        <Alert color="red" mb="sm" data-testid="connect-limit">
          {t('limitReached')}
        </Alert>
      )}
      {limit === 'near' && (
        <Alert color="yellow" mb="sm" data-testid="connect-limit">
          {t('limitNear', { n: count, max: LIMITS.maxCloudDrives })}
        </Alert>
      )}
      {selected ? (
        <KindForm
          kind={selected}
          reauthorize={reauthorize ?? null}
          disabled={limit === 'reached'}
          onBack={reauthorize ? null : () => setChosen(null)}
          onDone={(c) => void done(c)}
        />
      ) : (
        <Stack gap="sm">
          <Text size="sm" c="dimmed">
            {t('intro')}
          </Text>
          <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs" data-guide="add-drive-selectone">
            {availableFirst(kinds).map((k) => (
              <UnstyledButton
                key={k.cloud_name}
                disabled={!k.available || limit === 'reached'}
                aria-disabled={!k.available || undefined}
                title={k.available ? undefined : (k.reason ?? undefined)}
                className="sf-kind-card"
                data-testid={`kind-${k.cloud_name}`}
                data-unavailable={!k.available || undefined}
                onClick={() => setChosen(k.cloud_name)}
                style={{
                  border: '1px solid var(--mantine-color-gray-3)',
                  borderRadius: 8,
                  padding: 10,
                  opacity: k.available ? 1 : 0.5,
                  cursor: k.available ? 'pointer' : 'not-allowed',
                }}
              >
                <Group gap={8} wrap="nowrap">
                  <CloudIcon kind={k.cloud_name} size={22} />
                  <Stack gap={0} style={{ minWidth: 0 }}>
                    <Text size="sm" truncate="end">
                      {kindName(k.cloud_name, k.display_name)}
                    </Text>
                    {!k.available && (
                      <Badge size="xs" color="gray" variant="light">
                        {t('unavailable')}
                      </Badge>
                    )}
                  </Stack>
                </Group>
                {!k.available && k.reason && (
                  <Text size="xs" c="dimmed" mt={4} lineClamp={3}>
                    {k.reason}
                  </Text>
                )}
              </UnstyledButton>
            ))}
          </SimpleGrid>
        </Stack>
      )}
    </Modal>
  );
}

function KindForm({
  kind,
  reauthorize,
  disabled,
  onBack,
  onDone,
}: {
  kind: SystemCloudKind;
  reauthorize: Cloud | null;
  disabled: boolean;
  onBack: (() => void) | null;
  onDone: (cloud: Cloud | null) => void;
}) {
  const { t } = useTranslation('connect');
  const [values, setValues] = useState<FieldValues>({});
  const [alias, setAlias] = useState('');
  const [fieldError, setFieldError] = useState<FieldError | null>(null);
  const [common, setCommon] = useState('');
  const [busy, setBusy] = useState(false);
  const popup = useRef<Window | null>(null);

  useEffect(() => {
    setValues({});
    setFieldError(null);
    setCommon('');
  }, [kind.cloud_name]);

  // The OAuth callback page posts its result to this window (and on a BroadcastChannel when the
  // opener link was lost, e.g. after the service's pages changed the pop-up's opener policy).
  useEffect(() => {
    if (kind.auth !== 'oauth') return;
    const handle = (data: unknown) => {
      if (!isOAuthResult(data)) return;
      popup.current?.close();
      setBusy(false);
      if (data.ok) onDone(data.cloud ?? null);
      else setCommon(data.msg || t('oauthFailed'));
    };
    const onMessage = (e: MessageEvent) => {
      if (e.origin === window.location.origin) handle(e.data);
    };
    window.addEventListener('message', onMessage);
    const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(OAUTH_CHANNEL) : null;
    if (channel) channel.onmessage = (e: MessageEvent) => handle(e.data);
    return () => {
      window.removeEventListener('message', onMessage);
      channel?.close();
    };
  }, [kind.auth, onDone, t]);

  const set = (name: string, value: string | boolean) => {
    setValues((v) => ({ ...v, [name]: value }));
    // Editing a field clears its error and the common error (spec section 5).
    setFieldError(null);
    setCommon('');
  };

  const submit = async () => {
    const problem = validateConnectForm(kind, values);
    if (problem) {
      setFieldError(problem);
      return;
    }
    setBusy(true);
    try {
      const credentials = credentialsOf(kind, values);
      const cloud = reauthorize
        ? await connectApi.reauthorize(reauthorize.id, credentials)
        : await connectApi.connect(kind.cloud_name, credentials, alias.trim());
      onDone(cloud);
    } catch (err) {
      setCommon(err instanceof Error ? err.message : String(err));
      // A free account's cloud limit: upgrading lifts it.
      const state = sessionStore.getState();
      if (
        err instanceof ApiRequestError &&
        err.code === ApiCode.CLOUD_LIMIT_REACHED &&
        selectBillingOn(state) &&
        !selectPaid(state)
      )
        void askUpgrade();
    } finally {
      setBusy(false);
    }
  };

  const startOAuth = async () => {
    setCommon('');
    // Open the window first, in the click, so pop-up blockers allow it.
    const win = window.open('about:blank', 'skyferry-oauth', 'width=520,height=680');
    popup.current = win;
    setBusy(true);
    try {
      const redirectUri =
        (await desktopBridge()
          ?.oauthRedirectUri?.()
          .catch(() => null)) ?? undefined;
      const { authorize_url } = await connectApi.oauthStart(kind.cloud_name, reauthorize?.id, redirectUri);
      if (win) win.location.href = authorize_url;
      else window.location.href = authorize_url;
    } catch (err) {
      win?.close();
      setBusy(false);
      setCommon(err instanceof Error ? err.message : String(err));
    }
  };

  const label = (name: string, fallback: string) => t(`field.${name}`, { defaultValue: fallback });
  const hintOf = (name: string, fallback: string | undefined) =>
    fallback === undefined ? undefined : t(`hint.${name}`, { defaultValue: fallback });
  // The message names the field as the form shows it, in the user's language.
  const errorOf = (name: string) =>
    fieldError?.field === name
      ? t(fieldError.key, {
          ...(fieldError.values ?? {}),
          ...(fieldError.values?.field === undefined ? {} : { field: label(name, fieldError.values.field) }),
          defaultValue: '',
        })
      : undefined;

  return (
    <Stack gap="sm" data-testid={`connect-form-${kind.cloud_name}`}>
      <Group gap="xs">
        {onBack && (
          <Button
            variant="subtle"
            size="compact-sm"
            leftSection={<IconArrowLeft size={14} aria-hidden />}
            onClick={onBack}
          >
            {t('back')}
          </Button>
        )}
        <CloudIcon kind={kind.cloud_name} size={22} />
        <Text fw={600}>{kindName(kind.cloud_name, kind.display_name)}</Text>
      </Group>
      {kind.auth === 'oauth' ? (
        <Stack gap="sm">
          <Text size="sm">{t('oauthIntro', { name: kindName(kind.cloud_name, kind.display_name) })}</Text>
          {kind.cloud_name === 'google_photos' && (
            <Alert variant="light" color="blue" data-testid="google-photos-notice">
              {t('googlePhotosNotice')}
            </Alert>
          )}
          <Button
            leftSection={<IconExternalLink size={16} aria-hidden />}
            onClick={() => void startOAuth()}
            loading={busy}
            disabled={disabled || !kind.available}
          >
            {t('oauthButton', { name: kindName(kind.cloud_name, kind.display_name) })}
          </Button>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
          noValidate
        >
          <Stack gap="xs">
            {kind.roots && <LocalRoots roots={kind.roots} />}
            {kind.fields.map((f) => {
              const common = {
                label: label(f.name, f.label),
                description: hintOf(f.name, f.hint),
                required: f.required,
                error: errorOf(f.name),
                name: f.name,
                'data-testid': `field-${f.name}`,
              };
              const value = values[f.name];
              if (f.type === 'boolean') {
                return (
                  <Checkbox
                    key={f.name}
                    label={common.label}
                    description={common.description}
                    checked={value === true}
                    data-testid={common['data-testid']}
                    onChange={(e) => set(f.name, e.currentTarget.checked)}
                  />
                );
              }
              if (f.type === 'select') {
                return (
                  <NativeSelect
                    key={f.name}
                    {...common}
                    value={selectValue(f, value)}
                    data={(f.options ?? []).map((o) => ({
                      value: o.value,
                      label: t(`option.${f.name}.${o.value}`, { defaultValue: o.label }),
                    }))}
                    onChange={(e) => set(f.name, e.currentTarget.value)}
                  />
                );
              }
              const text = typeof value === 'string' ? value : '';
              if (f.type === 'textarea') {
                return (
                  <Textarea
                    key={f.name}
                    {...common}
                    autosize
                    minRows={3}
                    value={text}
                    onChange={(e) => set(f.name, e.currentTarget.value)}
                  />
                );
              }
              if (f.type === 'password') {
                return (
                  <PasswordInput
                    key={f.name}
                    {...common}
                    value={text}
                    autoComplete="off"
                    onChange={(e) => set(f.name, e.currentTarget.value)}
                  />
                );
              }
              return (
                <TextInput
                  key={f.name}
                  {...common}
                  value={text}
                  inputMode={f.type === 'number' ? 'numeric' : undefined}
                  placeholder={f.name === 'path' && kind.roots?.[0] ? kind.roots[0] : PLACEHOLDERS[f.name]}
                  onChange={(e) => set(f.name, e.currentTarget.value)}
                />
              );
            })}
            {!reauthorize && (
              <TextInput
                label={t('alias')}
                value={alias}
                data-testid="field-alias"
                onChange={(e) => setAlias(e.currentTarget.value)}
              />
            )}
            {common && (
              <Alert color="red" data-testid="connect-error">
                {common}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button type="submit" loading={busy} disabled={disabled || !kind.available} data-testid="connect-submit">
                {reauthorize ? t('reauthorize') : t('connect')}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
      {kind.auth === 'oauth' && common && (
        <Alert color="red" data-testid="connect-error">
          {common}
        </Alert>
      )}
    </Stack>
  );
}

/**
 * The local-folder kind: the folders on the server this account may connect (every allowed root
 * for the operator, the user's own folder under each for a user the operator allowed), and, for
 * the operator, how they are configured.
 */
function LocalRoots({ roots }: { roots: string[] }) {
  const { t } = useTranslation('connect');
  // How the folders are chosen is the server's configuration: the operator's business.
  const operator = useSession((s) => s.user.info?.role === 'operator');
  return (
    <Alert variant="light" color="blue" data-testid="local-roots">
      <Text size="sm">{t('localRoots')}</Text>
      {roots.map((r) => (
        <Code key={r} block mt={4}>
          {r}
        </Code>
      ))}
      {operator && (
        <Text size="xs" c="dimmed" mt={6}>
          {t('localDefault')}
        </Text>
      )}
    </Alert>
  );
}
