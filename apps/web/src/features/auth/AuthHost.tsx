import { Button, Group, List, Modal, Stack, Text, ThemeIcon } from '@mantine/core';
import { IconCloud, IconCloudCheck } from '@tabler/icons-react';
import { LIMITS } from '@skyferry/contract';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../messages/toast.ts';
import { cloudsToBind, finishBind } from '../session/actions.ts';
import { useSession } from '../session/store.ts';
import { cloudLabel } from '../shell/clouds.ts';
import { accountPageUrl, closeLogin, listenAccountMessages, scheduleCookieCheck } from './login.ts';
import { authUiStore, useAuthUi } from './store.ts';
import { Name } from '../../lib/Name.tsx';

/** Everything sign-in needs on every screen: the login panel, the hidden logout frame, the bind prompt. */
export function AuthHost() {
  useEffect(() => listenAccountMessages(), []);
  useEffect(() => scheduleCookieCheck(), []);
  return (
    <>
      <LoginModal />
      <LogoutFrame />
      <BindTempCloudsModal />
    </>
  );
}

export function LoginModal() {
  const { t } = useTranslation('auth');
  const opened = useAuthUi((s) => s.loginOpen);
  const page = useAuthUi((s) => s.loginPage);
  // The page the panel opened on; moving between pages inside the frame only changes the title.
  const [first, setFirst] = useState(page);
  useEffect(() => {
    if (opened) setFirst(authUiStore.getState().loginPage);
  }, [opened]);
  const signInUrl = useSession((s) => s.init?.sign_in_url ?? '');
  const src = useMemo(
    () => (opened && signInUrl ? accountPageUrl(signInUrl, { signIn: true, page: first }) : ''),
    [opened, signInUrl, first],
  );
  const title = { signin: t('login.title'), signup: t('login.signUpTitle'), forgot: t('login.forgotTitle') }[page];
  return (
    <Modal opened={opened} onClose={closeLogin} title={title} size={460} centered>
      {src ? (
        <iframe
          src={src}
          title={title}
          style={{ width: '100%', height: 560, border: 0, display: 'block' }}
          data-testid="sign-in-frame"
        />
      ) : (
        <Text size="sm">{t('login.unavailable')}</Text>
      )}
    </Modal>
  );
}

/** The hidden sign-out frame: loads the account's sign-out page while a logout runs. */
export function LogoutFrame() {
  const { t } = useTranslation('auth');
  const src = useAuthUi((s) => s.logoutFrameSrc);
  if (!src) return null;
  return (
    <iframe
      src={accountPageUrl(src)}
      title={t('logout.frameTitle')}
      aria-hidden="true"
      tabIndex={-1}
      data-testid="sign-out-frame"
      style={{ position: 'absolute', width: 0, height: 0, border: 0, visibility: 'hidden' }}
    />
  );
}

/**
 * After a login, offers to associate the visitor's temporary clouds with the account (at most 5,
 * the most recently used), or to discard them.
 */
export function BindTempCloudsModal() {
  const { t } = useTranslation('auth');
  const temp = useAuthUi((s) => s.bindPrompt);
  const [busy, setBusy] = useState(false);
  if (!temp) return null;
  const chosen = cloudsToBind(temp, LIMITS.tempCloudsBoundOnLogin);
  const chosenIds = new Set(chosen.map((c) => c.id));
  const decide = async (bind: boolean) => {
    setBusy(true);
    try {
      await finishBind(bind ? chosen : []);
    } catch (err) {
      toast.error(err instanceof Error && err.message ? err.message : t('bind.failed'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal opened onClose={() => void decide(false)} title={t('bind.title')} centered closeOnClickOutside={false}>
      <Stack gap="sm">
        <Text size="sm">{t('bind.message', { count: temp.length })}</Text>
        {temp.length > LIMITS.tempCloudsBoundOnLogin && (
          <Text size="sm" c="dimmed">
            {t('bind.limit', { max: LIMITS.tempCloudsBoundOnLogin })}
          </Text>
        )}
        <List spacing={4} size="sm" center>
          {temp.map((c) => (
            <List.Item
              key={c.id}
              icon={
                <ThemeIcon size={20} radius="xl" color={chosenIds.has(c.id) ? 'teal' : 'gray'} variant="light">
                  {chosenIds.has(c.id) ? <IconCloudCheck size={14} aria-hidden /> : <IconCloud size={14} aria-hidden />}
                </ThemeIcon>
              }
            >
              <Name value={cloudLabel(c)} />
              {!chosenIds.has(c.id) && (
                <Text span size="xs" c="dimmed">
                  {' '}
                  {t('bind.notKept')}
                </Text>
              )}
            </List.Item>
          ))}
        </List>
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => void decide(false)} loading={busy}>
            {t('bind.discard')}
          </Button>
          <Button onClick={() => void decide(true)} loading={busy} data-autofocus>
            {t('bind.associate')}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
